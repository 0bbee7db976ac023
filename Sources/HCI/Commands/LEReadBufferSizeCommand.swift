import BluetoothWire

/// HCI_LE_Read_Buffer_Size [v1], Core v5.4, Vol 4, Part E, 7.8.2.
///
/// A zero ``LEReadBufferSizeReturnParameters/leACLDataPacketLength`` means the controller shares
/// its BR/EDR buffers: use Read Buffer Size instead.
public struct LEReadBufferSizeCommand: HCIParameterlessCommand {
    public typealias ReturnParameters = LEReadBufferSizeReturnParameters
    public static let opcode = HCIOpcode.leReadBufferSize
    public init() {}
}

public struct LEReadBufferSizeReturnParameters: HCIReturnParameters {
    public var status: HCIStatus
    /// The largest ACL payload the controller accepts from the host (27 is the LE minimum).
    public var leACLDataPacketLength: UInt16
    /// How many ACL packets the controller can hold: the host's ACL credits.
    public var totalNumLEACLDataPackets: UInt8

    public init(status: HCIStatus, leACLDataPacketLength: UInt16, totalNumLEACLDataPackets: UInt8) {
        self.status = status
        self.leACLDataPacketLength = leACLDataPacketLength
        self.totalNumLEACLDataPackets = totalNumLEACLDataPackets
    }

    public init(returnParameters reader: inout ByteReader) throws(WireError) {
        status = HCIStatus(rawValue: try reader.readUInt8())
        leACLDataPacketLength = try reader.readUInt16()
        totalNumLEACLDataPackets = try reader.readUInt8()
    }

    public func write(to writer: inout ByteWriter) {
        writer.writeUInt8(status.rawValue)
        writer.writeUInt16(leACLDataPacketLength)
        writer.writeUInt8(totalNumLEACLDataPackets)
    }
}
