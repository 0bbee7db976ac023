import BluetoothWire

/// HCI_Disconnect, Core v5.4, Vol 4, Part E, 7.1.6. Acknowledged by Command Status; the outcome
/// arrives as a Disconnection Complete event.
public struct DisconnectCommand: HCICommand {
    public static let opcode = HCIOpcode.disconnect
    public static var acknowledgement: HCICommandAcknowledgement { .commandStatus }
    public var connectionHandle: UInt16
    /// Usually ``HCIStatus/remoteUserTerminatedConnection`` (0x13).
    public var reason: HCIStatus

    public init(connectionHandle: UInt16, reason: HCIStatus = .remoteUserTerminatedConnection) {
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
