import BluetoothWire

/// HCI_Set_Event_Mask, Core v5.4, Vol 4, Part E, 7.3.1. Bit 61 enables LE Meta events.
public struct SetEventMaskCommand: HCICommand {
    public static let opcode = HCIOpcode.setEventMask
    public var eventMask: UInt64

    public init(eventMask: UInt64) {
        self.eventMask = eventMask
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        eventMask = try reader.readUInt64()
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt64(eventMask)
    }
}
