import BluetoothWire

/// HCI_Write_LE_Host_Support, Core v5.4, Vol 4, Part E, 7.3.79.
public struct WriteLEHostSupportCommand: HCICommand {
    public static let opcode = HCIOpcode.writeLEHostSupport
    /// 0x01: LE supported by the host.
    public var leSupportedHost: UInt8
    /// Simultaneous_LE_Host in older specs; "Unused" since v5.1 and must be 0x00.
    public var unused: UInt8

    public init(leSupportedHost: UInt8 = 1, unused: UInt8 = 0) {
        self.leSupportedHost = leSupportedHost
        self.unused = unused
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        leSupportedHost = try reader.readUInt8()
        unused = try reader.readUInt8()
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt8(leSupportedHost)
        writer.writeUInt8(unused)
    }
}
