import BluetoothWire

/// HCI_LE_Connection_Update, Core v5.4, Vol 4, Part E, 7.8.18. Acknowledged by Command Status;
/// the result arrives as LE Connection Update Complete.
public struct LEConnectionUpdateCommand: HCICommand {
    public static let opcode = HCIOpcode.leConnectionUpdate
    public static var acknowledgement: HCICommandAcknowledgement { .commandStatus }
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
