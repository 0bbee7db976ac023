import BluetoothWire

/// HCI_Number_Of_Completed_Packets (0x13), Core v5.4, Vol 4, Part E, 7.7.19: ACL credits returned.
///
/// The entries are interleaved (handle, count), per the array rule of Vol 4, Part E, 5.2 as read
/// by Linux and bumble.
public struct NumberOfCompletedPacketsEvent: HCIEventParameters {
    public struct Entry: Equatable, Hashable, Sendable {
        public var connectionHandle: UInt16
        public var numCompletedPackets: UInt16

        public init(connectionHandle: UInt16, numCompletedPackets: UInt16) {
            self.connectionHandle = connectionHandle
            self.numCompletedPackets = numCompletedPackets
        }
    }

    public var entries: [Entry]

    public init(entries: [Entry]) {
        self.entries = entries
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        let count = Int(try reader.readUInt8())
        guard reader.remainingCount == count * 4 else {
            throw .lengthMismatch(field: "Num_Handles x 4", declared: count * 4, actual: reader.remainingCount)
        }
        entries = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            entries.append(Entry(connectionHandle: try reader.readUInt16(), numCompletedPackets: try reader.readUInt16()))
        }
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt8(UInt8(truncatingIfNeeded: entries.count))
        for entry in entries {
            writer.writeUInt16(entry.connectionHandle)
            writer.writeUInt16(entry.numCompletedPackets)
        }
    }
}
