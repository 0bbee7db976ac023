/// A Bluetooth UUID, Core v5.4, Vol 3, Part B, 2.5.1.
///
/// Always stored as its full 128 bits, so the 16-bit `0x180D` and
/// `0000180D-0000-1000-8000-00805F9B34FB` are equal. On the wire a UUID is either 2 or 16
/// octets, little-endian; which form a field uses is decided by the PDU (a length or format
/// field), so readers and writers take a ``WireFormat``.
public struct BluetoothUUID: Hashable, Sendable {
    /// The most significant 64 bits.
    public let high: UInt64
    /// The least significant 64 bits.
    public let low: UInt64

    /// The Bluetooth Base UUID `00000000-0000-1000-8000-00805F9B34FB`.
    public static let base = BluetoothUUID(high: 0x0000_0000_0000_1000, low: 0x8000_0080_5F9B_34FB)

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A 16-bit UUID assigned by the Bluetooth SIG, e.g. `0x180D` (Heart Rate).
    public init(uuid16: UInt16) {
        self.init(uuid32: UInt32(uuid16))
    }

    /// A 32-bit UUID: the Base UUID with `value` in bits 96-127.
    public init(uuid32: UInt32) {
        self.init(high: BluetoothUUID.base.high | UInt64(uuid32) << 32, low: BluetoothUUID.base.low)
    }

    /// The 16-bit short form, when this UUID is one.
    public var uuid16: UInt16? {
        guard low == BluetoothUUID.base.low, high & 0xFFFF_0000_FFFF_FFFF == BluetoothUUID.base.high else {
            return nil
        }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    /// How a UUID is laid out in a PDU.
    public enum WireFormat: Sendable, Equatable {
        /// 2 octets; only for UUIDs that have a 16-bit form.
        case bits16
        /// 16 octets, least significant first.
        case bits128

        public var byteCount: Int { self == .bits16 ? 2 : 16 }
    }

    /// The shortest form this UUID can be written in.
    public var shortestWireFormat: WireFormat { uuid16 == nil ? .bits128 : .bits16 }

    /// Reads a UUID in the given wire format.
    public init(from reader: inout ByteReader, format: WireFormat) throws(WireError) {
        switch format {
        case .bits16:
            self.init(uuid16: try reader.readUInt16())
        case .bits128:
            let low = try reader.readUInt64()
            let high = try reader.readUInt64()
            self.init(high: high, low: low)
        }
    }

    /// Reads a UUID whose format is given by its length (2 or 16 octets), as in
    /// Read By Type Request; other lengths throw ``WireError/invalidValue(field:value:reason:)``.
    public init(from reader: inout ByteReader, length: Int) throws(WireError) {
        switch length {
        case 2: try self.init(from: &reader, format: .bits16)
        case 16: try self.init(from: &reader, format: .bits128)
        default: throw .invalidValue(field: "UUID length", value: length, reason: "must be 2 or 16 octets")
        }
    }

    /// Writes this UUID. It is a programmer error to ask for `.bits16` for a UUID without a
    /// 16-bit form; check ``uuid16`` or use ``shortestWireFormat``.
    public func write(to writer: inout ByteWriter, format: WireFormat) {
        switch format {
        case .bits16:
            guard let short = uuid16 else { preconditionFailure("\(self) has no 16-bit form") }
            writer.writeUInt16(short)
        case .bits128:
            writer.writeUInt64(low)
            writer.writeUInt64(high)
        }
    }
}
