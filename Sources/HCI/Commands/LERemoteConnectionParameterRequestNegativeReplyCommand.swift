import BluetoothWire

/// HCI_LE_Remote_Connection_Parameter_Request_Negative_Reply, Core v5.4, Vol 4, Part E, 7.8.32.
public struct LERemoteConnectionParameterRequestNegativeReplyCommand: HCICommand {
    public typealias ReturnParameters = ConnectionHandleReturnParameters
    public static let opcode = HCIOpcode.leRemoteConnectionParameterRequestNegativeReply
    public var connectionHandle: UInt16
    /// Usually ``HCIStatus/unacceptableConnectionParameters`` (0x3B).
    public var reason: HCIStatus

    public init(connectionHandle: UInt16, reason: HCIStatus = .unacceptableConnectionParameters) {
        self.connectionHandle = connectionHandle
        self.reason = reason
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        connectionHandle = try reader.readUInt16()
        reason = HCIStatus(rawValue: try reader.readUInt8())
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt16(connectionHandle)
        writer.writeUInt8(reason.rawValue)
    }
}
