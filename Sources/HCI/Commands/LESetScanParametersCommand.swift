import BluetoothWire

/// HCI_LE_Set_Scan_Parameters, Core v5.4, Vol 4, Part E, 7.8.10.
///
/// Interval and window are in units of 0.625 ms (0x0004...0x4000), window <= interval.
public struct LESetScanParametersCommand: HCICommand {
    public static let opcode = HCIOpcode.leSetScanParameters
    /// 0x00 passive, 0x01 active (sends scan requests).
    public var leScanType: UInt8
    public var leScanInterval: UInt16
    public var leScanWindow: UInt16
    public var ownAddressType: BluetoothAddressType
    /// 0x00 accept all advertisements (except directed to others).
    public var scanningFilterPolicy: UInt8

    public init(leScanType: UInt8, leScanInterval: UInt16, leScanWindow: UInt16,
                ownAddressType: BluetoothAddressType, scanningFilterPolicy: UInt8 = 0) {
        self.leScanType = leScanType
        self.leScanInterval = leScanInterval
        self.leScanWindow = leScanWindow
        self.ownAddressType = ownAddressType
        self.scanningFilterPolicy = scanningFilterPolicy
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        leScanType = try reader.readUInt8()
        leScanInterval = try reader.readUInt16()
        leScanWindow = try reader.readUInt16()
        ownAddressType = BluetoothAddressType(rawValue: try reader.readUInt8())
        scanningFilterPolicy = try reader.readUInt8()
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt8(leScanType)
        writer.writeUInt16(leScanInterval)
        writer.writeUInt16(leScanWindow)
        writer.writeUInt8(ownAddressType.rawValue)
        writer.writeUInt8(scanningFilterPolicy)
    }
}
