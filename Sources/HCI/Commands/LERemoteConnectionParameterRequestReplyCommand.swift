import BluetoothWire

/// HCI_LE_Remote_Connection_Parameter_Request_Reply, Core v5.4, Vol 4, Part E, 7.8.31: accepts
/// a peer's LE Remote Connection Parameter Request (possibly with adjusted values).
public struct LERemoteConnectionParameterRequestReplyCommand: HCICommand {
    public typealias ReturnParameters = ConnectionHandleReturnParameters
    public static let opcode = HCIOpcode.leRemoteConnectionParameterRequestReply
    public var connectionHandle: UInt16
    public var connectionParameters: LEConnectionParameterRange

    public init(connectionHandle: UInt16, connectionParameters: LEConnectionParameterRange) {
        self.connectionHandle = connectionHandle
        self.connectionParameters = connectionParameters
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        connectionHandle = try reader.readUInt16()
        connectionParameters = try LEConnectionParameterRange(from: &reader)
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt16(connectionHandle)
        connectionParameters.write(to: &writer)
    }
}
