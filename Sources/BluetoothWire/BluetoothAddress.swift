/// A 48-bit Bluetooth device address (BD_ADDR), Core v5.4, Vol 2, Part B, 1.2 and Vol 6, Part B, 1.3.
///
/// On the wire the six octets travel least significant first; as text they are written most
/// significant first, `"AA:BB:CC:DD:EE:FF"`. The address alone does not say whether it is public
/// or random: that is a separate ``BluetoothAddressType`` carried next to it in HCI and GAP.
public struct BluetoothAddress: Hashable, Sendable, Comparable {
    /// The address as a 48-bit integer; the upper 16 bits are always zero.
    public let rawValue: UInt64

    /// Creates an address from its 48-bit value. Bits above 47 are discarded.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue & 0xFFFF_FFFF_FFFF
    }

    /// Creates an address from six octets in wire order (least significant first).
    public init?(littleEndianBytes bytes: some Collection<UInt8>) {
        guard bytes.count == 6 else { return nil }
        var value: UInt64 = 0
        for (i, byte) in bytes.enumerated() { value |= UInt64(byte) << (8 * i) }
        self.init(rawValue: value)
    }

    /// Parses `"AA:BB:CC:DD:EE:FF"` (case-insensitive; `-` also accepted as separator).
    public init(parsing text: String) throws(WireError) {
        let parts = text.split(omittingEmptySubsequences: false) { $0 == ":" || $0 == "-" }
        guard parts.count == 6 else {
            throw .malformedText(text, expected: "six hex octets separated by colons, e.g. AA:BB:CC:DD:EE:FF")
        }
        var value: UInt64 = 0
        for part in parts {
            guard part.count == 2, part.allSatisfy(\.isHexDigit), let octet = UInt8(part, radix: 16) else {
                throw .malformedText(text, expected: "each octet as two hex digits, e.g. AA:BB:CC:DD:EE:FF")
            }
            value = value << 8 | UInt64(octet)
        }
        self.init(rawValue: value)
    }

    /// Reads six octets, least significant first.
    public init(from reader: inout ByteReader) throws(WireError) {
        let low = try reader.readUInt32()
        let high = try reader.readUInt16()
        self.init(rawValue: UInt64(high) << 32 | UInt64(low))
    }

    /// Writes six octets, least significant first.
    public func write(to writer: inout ByteWriter) {
        writer.writeUInt32(UInt32(truncatingIfNeeded: rawValue))
        writer.writeUInt16(UInt16(truncatingIfNeeded: rawValue >> 32))
    }

    /// The six octets in wire order (least significant first).
    public var littleEndianBytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: rawValue >> (8 * $0)) }
    }

    /// The all-zero address, used by HCI where "no address" is meant.
    public static let zero = BluetoothAddress(rawValue: 0)

    /// For a random address, its subtype from the two most significant bits
    /// (Core v5.4, Vol 6, Part B, 1.3.2). Meaningless for public addresses.
    public var randomSubtype: RandomSubtype {
        switch rawValue >> 46 {
        case 0b11: return .staticDevice
        case 0b01: return .resolvablePrivate
        case 0b00: return .nonResolvablePrivate
        default: return .reserved
        }
    }

    /// The kinds of random device address.
    public enum RandomSubtype: Sendable, Equatable {
        case staticDevice, resolvablePrivate, nonResolvablePrivate, reserved
    }

    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}

extension BluetoothAddress: CustomStringConvertible {
    /// `"AA:BB:CC:DD:EE:FF"`, most significant octet first, upper-case.
    public var description: String {
        let digits = Array("0123456789ABCDEF")
        var text = ""
        for i in stride(from: 5, through: 0, by: -1) {
            let octet = Int(truncatingIfNeeded: rawValue >> (8 * UInt64(i))) & 0xFF
            text.append(digits[octet >> 4])
            text.append(digits[octet & 0x0F])
            if i > 0 { text.append(":") }
        }
        return text
    }
}
