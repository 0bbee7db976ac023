import BluetoothWire

/// The return parameters a Command Complete event carries for one command,
/// Core v5.4, Vol 4, Part E, 7.7.14. Every set starts with a status octet.
public protocol HCIReturnParameters: Sendable, Equatable {
    /// The command's outcome.
    var status: HCIStatus { get }

    /// Reads the return parameters. Called only when the status is success: a failed command
    /// may return the status alone.
    init(returnParameters reader: inout ByteReader) throws(WireError)

    func write(to writer: inout ByteWriter)
}

/// Return parameters that are only a status, as for Reset or LE Set Scan Enable.
public struct StatusReturnParameters: HCIReturnParameters {
    public var status: HCIStatus

    public init(status: HCIStatus) {
        self.status = status
    }

    public init(returnParameters reader: inout ByteReader) throws(WireError) {
        status = HCIStatus(rawValue: try reader.readUInt8())
    }

    public func write(to writer: inout ByteWriter) {
        writer.writeUInt8(status.rawValue)
    }
}

/// Return parameters of a status and a connection handle, as for the LE Remote Connection
/// Parameter Request Reply and Negative Reply (Core v5.4, Vol 4, Part E, 7.8.31 and 7.8.32).
public struct ConnectionHandleReturnParameters: HCIReturnParameters {
    public var status: HCIStatus
    public var connectionHandle: UInt16

    public init(status: HCIStatus, connectionHandle: UInt16) {
        self.status = status
        self.connectionHandle = connectionHandle
    }

    public init(returnParameters reader: inout ByteReader) throws(WireError) {
        status = HCIStatus(rawValue: try reader.readUInt8())
        connectionHandle = try reader.readUInt16()
    }

    public func write(to writer: inout ByteWriter) {
        writer.writeUInt8(status.rawValue)
        writer.writeUInt16(connectionHandle)
    }
}
