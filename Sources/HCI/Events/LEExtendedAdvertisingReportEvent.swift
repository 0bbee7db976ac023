import BluetoothWire

/// HCI_LE_Extended_Advertising_Report (subevent 0x0D), Core v5.4, Vol 4, Part E, 7.7.65.13.
///
/// bumble's emulator answers even a *legacy* scan with this event, without the legacy bit and
/// twice per PDU (`docs/bumble-test-peer.md`, 4): a scanner must accept it and de-duplicate.
public struct LEExtendedAdvertisingReportEvent: HCIEventParameters {
    public struct Report: Equatable, Sendable {
        public var eventType: ExtendedAdvertisingEventType
        public var addressType: BluetoothAddressType
        public var address: BluetoothAddress
        /// 0x01 LE 1M, 0x03 LE Coded.
        public var primaryPHY: UInt8
        /// 0x00 none, 0x01 LE 1M, 0x02 LE 2M, 0x03 LE Coded.
        public var secondaryPHY: UInt8
        /// 0xFF: no ADI field.
        public var advertisingSID: UInt8
        /// dBm; 127 means unavailable.
        public var txPower: Int8
        /// dBm; 127 means unavailable.
        public var rssi: Int8
        /// Units of 1.25 ms; 0 means no periodic advertising.
        public var periodicAdvertisingInterval: UInt16
        public var directAddressType: BluetoothAddressType
        public var directAddress: BluetoothAddress
        public var data: [UInt8]

        public init(eventType: ExtendedAdvertisingEventType, addressType: BluetoothAddressType,
                    address: BluetoothAddress, primaryPHY: UInt8 = 1, secondaryPHY: UInt8 = 0,
                    advertisingSID: UInt8 = 0xFF, txPower: Int8 = 127, rssi: Int8,
                    periodicAdvertisingInterval: UInt16 = 0, directAddressType: BluetoothAddressType = .public,
                    directAddress: BluetoothAddress = .zero, data: [UInt8]) {
            self.eventType = eventType
            self.addressType = addressType
            self.address = address
            self.primaryPHY = primaryPHY
            self.secondaryPHY = secondaryPHY
            self.advertisingSID = advertisingSID
            self.txPower = txPower
            self.rssi = rssi
            self.periodicAdvertisingInterval = periodicAdvertisingInterval
            self.directAddressType = directAddressType
            self.directAddress = directAddress
            self.data = data
        }

        init(from reader: inout ByteReader) throws(WireError) {
            eventType = ExtendedAdvertisingEventType(rawValue: try reader.readUInt16())
            addressType = BluetoothAddressType(rawValue: try reader.readUInt8())
            address = try BluetoothAddress(from: &reader)
            primaryPHY = try reader.readUInt8()
            secondaryPHY = try reader.readUInt8()
            advertisingSID = try reader.readUInt8()
            txPower = try reader.readInt8()
            rssi = try reader.readInt8()
            periodicAdvertisingInterval = try reader.readUInt16()
            directAddressType = BluetoothAddressType(rawValue: try reader.readUInt8())
            directAddress = try BluetoothAddress(from: &reader)
            data = try reader.readBytes(Int(try reader.readUInt8()))
        }

        func write(to writer: inout ByteWriter) {
            writer.writeUInt16(eventType.rawValue)
            writer.writeUInt8(addressType.rawValue)
            address.write(to: &writer)
            writer.writeUInt8(primaryPHY)
            writer.writeUInt8(secondaryPHY)
            writer.writeUInt8(advertisingSID)
            writer.writeInt8(txPower)
            writer.writeInt8(rssi)
            writer.writeUInt16(periodicAdvertisingInterval)
            writer.writeUInt8(directAddressType.rawValue)
            directAddress.write(to: &writer)
            writer.writeUInt8(UInt8(truncatingIfNeeded: data.count))
            writer.writeBytes(data)
        }
    }

    public var reports: [Report]

    public init(reports: [Report]) {
        self.reports = reports
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        let count = Int(try reader.readUInt8())
        // Each report takes at least 24 octets: reject an impossible count before allocating.
        guard count * 24 <= reader.remainingCount else {
            throw .truncated(needed: count * 24, available: reader.remainingCount, offset: reader.offset)
        }
        reports = []
        reports.reserveCapacity(count)
        for _ in 0..<count { reports.append(try Report(from: &reader)) }
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt8(UInt8(truncatingIfNeeded: reports.count))
        for report in reports { report.write(to: &writer) }
    }
}

/// Event_Type bits of an extended advertising report, Core v5.4, Vol 4, Part E, 7.7.65.13.
public struct ExtendedAdvertisingEventType: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public var isConnectable: Bool { rawValue & 0x01 != 0 }
    public var isScannable: Bool { rawValue & 0x02 != 0 }
    public var isDirected: Bool { rawValue & 0x04 != 0 }
    public var isScanResponse: Bool { rawValue & 0x08 != 0 }
    public var isLegacy: Bool { rawValue & 0x10 != 0 }
    /// 0 complete, 1 incomplete (more to come), 2 incomplete (truncated).
    public var dataStatus: UInt8 { UInt8((rawValue >> 5) & 0x03) }
}
