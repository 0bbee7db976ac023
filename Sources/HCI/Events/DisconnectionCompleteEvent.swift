import BluetoothWire

/// HCI_Disconnection_Complete (0x05), Core v5.4, Vol 4, Part E, 7.7.5.
///
/// On this event the host must return the connection's in-flight ACL credits: the controller
/// will never report them in Number Of Completed Packets.
public struct DisconnectionCompleteEvent: HCIEventParameters {
    public var status: HCIStatus
    public var connectionHandle: UInt16
    /// Why the link went down; bumble's emulator echoes the host's own reason.
    public var reason: HCIStatus

    public init(status: HCIStatus, connectionHandle: UInt16, reason: HCIStatus) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.reason = reason
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        status = HCIStatus(rawValue: try reader.readUInt8())
        connectionHandle = try reader.readUInt16()
        reason = HCIStatus(rawValue: try reader.readUInt8())
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt8(status.rawValue)
        writer.writeUInt16(connectionHandle)
        writer.writeUInt8(reason.rawValue)
    }
}
