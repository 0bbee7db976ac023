import BluetoothWire

/// HCI_Command_Status (0x0F), Core v5.4, Vol 4, Part E, 7.7.15: a command was accepted (status
/// success, outcome follows in another event) or refused.
public struct CommandStatusEvent: HCIEventParameters {
    public var status: HCIStatus
    /// How many commands the host may now send.
    public var numHCICommandPackets: UInt8
    public var commandOpcode: HCIOpcode

    public init(status: HCIStatus, numHCICommandPackets: UInt8, commandOpcode: HCIOpcode) {
        self.status = status
        self.numHCICommandPackets = numHCICommandPackets
        self.commandOpcode = commandOpcode
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        status = HCIStatus(rawValue: try reader.readUInt8())
        numHCICommandPackets = try reader.readUInt8()
        commandOpcode = HCIOpcode(rawValue: try reader.readUInt16())
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt8(status.rawValue)
        writer.writeUInt8(numHCICommandPackets)
        writer.writeUInt16(commandOpcode.rawValue)
    }
}
