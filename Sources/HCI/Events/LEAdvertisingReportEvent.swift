import BluetoothWire

/// HCI_LE_Advertising_Report (subevent 0x02), Core v5.4, Vol 4, Part E, 7.7.65.2: one or more
/// legacy advertising or scan response PDUs. Reports are laid out one after another
/// (interleaved), as Linux and bumble read them. Parse ``Report/data`` with the GAP module.
public struct LEAdvertisingReportEvent: HCIEventParameters {
    public struct Report: Equatable, Sendable {
        /// 0x00 ADV_IND, 0x01 ADV_DIRECT_IND, 0x02 ADV_SCAN_IND, 0x03 ADV_NONCONN_IND, 0x04 SCAN_RSP.
        public var eventType: UInt8
        public var addressType: BluetoothAddressType
        public var address: BluetoothAddress
        /// Advertising data structures, at most 31 octets from a conforming controller.
        public var data: [UInt8]
        /// dBm; 127 means unavailable.
        public var rssi: Int8

        public init(eventType: UInt8, addressType: BluetoothAddressType, address: BluetoothAddress,
                    data: [UInt8], rssi: Int8) {
            self.eventType = eventType
            self.addressType = addressType
            self.address = address
            self.data = data
            self.rssi = rssi
        }
    }

    public var reports: [Report]

    public init(reports: [Report]) {
        self.reports = reports
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        let count = Int(try reader.readUInt8())
        // Each report takes at least 10 octets: reject an impossible count before allocating.
        guard count * 10 <= reader.remainingCount else {
            throw .truncated(needed: count * 10, available: reader.remainingCount, offset: reader.offset)
        }
        reports = []
        reports.reserveCapacity(count)
        for _ in 0..<count {
            let eventType = try reader.readUInt8()
            let addressType = BluetoothAddressType(rawValue: try reader.readUInt8())
            let address = try BluetoothAddress(from: &reader)
            let data = try reader.readBytes(Int(try reader.readUInt8()))
            let rssi = try reader.readInt8()
            reports.append(Report(eventType: eventType, addressType: addressType, address: address, data: data, rssi: rssi))
        }
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt8(UInt8(truncatingIfNeeded: reports.count))
        for report in reports {
            writer.writeUInt8(report.eventType)
            writer.writeUInt8(report.addressType.rawValue)
            report.address.write(to: &writer)
            writer.writeUInt8(UInt8(truncatingIfNeeded: report.data.count))
            writer.writeBytes(report.data)
            writer.writeInt8(report.rssi)
        }
    }
}
