import BluetoothWire

/// HCI_LE_Set_Scan_Enable, Core v5.4, Vol 4, Part E, 7.8.11.
///
/// bumble's emulator answers a legacy scan with Extended Advertising Reports, twice per PDU,
/// and ignores duplicate filtering (`docs/bumble-test-peer.md`, 4).
public struct LESetScanEnableCommand: HCICommand {
    public static let opcode = HCIOpcode.leSetScanEnable
    public var leScanEnable: Bool
    public var filterDuplicates: Bool

    public init(leScanEnable: Bool, filterDuplicates: Bool) {
        self.leScanEnable = leScanEnable
        self.filterDuplicates = filterDuplicates
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        leScanEnable = try Self.readBool(&reader, field: "LE_Scan_Enable")
        filterDuplicates = try Self.readBool(&reader, field: "Filter_Duplicates")
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt8(leScanEnable ? 1 : 0)
        writer.writeUInt8(filterDuplicates ? 1 : 0)
    }

    static func readBool(_ reader: inout ByteReader, field: String) throws(WireError) -> Bool {
        let value = try reader.readUInt8()
        guard value <= 1 else { throw .invalidValue(field: field, value: Int(value), reason: "must be 0 or 1") }
        return value == 1
    }
}
