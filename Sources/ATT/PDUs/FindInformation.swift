import BluetoothWire

/// ATT_FIND_INFORMATION_REQ, Core v5.4, Vol 3, Part F, 3.4.3.1 (descriptor discovery).
public struct FindInformationRequest: ATTPDUParameters {
    public static let opcode = ATTOpcode.findInformationRequest
    public var startingHandle: UInt16
    public var endingHandle: UInt16

    public init(startingHandle: UInt16, endingHandle: UInt16) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        startingHandle = try reader.readUInt16()
        endingHandle = try reader.readUInt16()
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt16(startingHandle)
        writer.writeUInt16(endingHandle)
    }
}

/// ATT_FIND_INFORMATION_RSP, Core v5.4, Vol 3, Part F, 3.4.3.2: handle-UUID pairs, all 16-bit
/// (format 0x01) or all 128-bit (format 0x02); at least one pair.
public struct FindInformationResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.findInformationResponse

    public struct Entry: Equatable, Sendable {
        public var handle: UInt16
        public var type: BluetoothUUID
        public init(handle: UInt16, type: BluetoothUUID) {
            self.handle = handle
            self.type = type
        }
    }

    public var format: BluetoothUUID.WireFormat
    public var entries: [Entry]

    /// It is a programmer error to list a UUID without a 16-bit form under `.bits16`.
    public init(format: BluetoothUUID.WireFormat, entries: [Entry]) {
        self.format = format
        self.entries = entries
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        let rawFormat = try reader.readUInt8()
        switch rawFormat {
        case 0x01: format = .bits16
        case 0x02: format = .bits128
        default: throw .invalidValue(field: "Find Information Format", value: Int(rawFormat), reason: "must be 1 or 2")
        }
        let size = 2 + format.byteCount
        guard reader.remainingCount > 0, reader.remainingCount % size == 0 else {
            throw .invalidValue(field: "Find Information data length", value: reader.remainingCount,
                                reason: "must be a non-zero multiple of \(size)")
        }
        entries = []
        entries.reserveCapacity(reader.remainingCount / size)
        while !reader.isAtEnd {
            let handle = try reader.readUInt16()
            entries.append(Entry(handle: handle, type: try BluetoothUUID(from: &reader, format: format)))
        }
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt8(format == .bits16 ? 0x01 : 0x02)
        for entry in entries {
            writer.writeUInt16(entry.handle)
            entry.type.write(to: &writer, format: format)
        }
    }
}
