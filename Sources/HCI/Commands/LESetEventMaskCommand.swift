import BluetoothWire

/// HCI_LE_Set_Event_Mask, Core v5.4, Vol 4, Part E, 7.8.1. Bit n enables LE subevent n+1.
///
/// bumble's emulator ignores event masks (`docs/bumble-test-peer.md`, 9): decode defensively.
public struct LESetEventMaskCommand: HCICommand {
    public static let opcode = HCIOpcode.leSetEventMask
    public var leEventMask: UInt64

    public init(leEventMask: UInt64) {
        self.leEventMask = leEventMask
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        leEventMask = try reader.readUInt64()
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt64(leEventMask)
    }
}
