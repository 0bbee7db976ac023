/// Appends little-endian fields to a growing byte array: the encoding half of ``ByteReader``.
///
/// Writing never fails; a field too wide for its spec width is a programmer error and is
/// truncated by the caller choosing the integer type, not here.
public struct ByteWriter: Sendable {
    /// Everything written so far.
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 32) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The number of bytes written so far.
    public var count: Int { bytes.count }

    public mutating func writeUInt8(_ value: UInt8) {
        bytes.append(value)
    }

    public mutating func writeInt8(_ value: Int8) {
        bytes.append(UInt8(bitPattern: value))
    }

    public mutating func writeUInt16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    public mutating func writeUInt24(_ value: UInt32) {
        for i in 0..<3 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
    }

    public mutating func writeUInt32(_ value: UInt32) {
        for i in 0..<4 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
    }

    public mutating func writeUInt64(_ value: UInt64) {
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * i))) }
    }

    public mutating func writeBytes(_ value: some Sequence<UInt8>) {
        bytes.append(contentsOf: value)
    }

    /// Overwrites a 16-bit field written earlier at `index`, for lengths known only at the end.
    ///
    /// It is a programmer error to pass an index that was not written.
    public mutating func setUInt16(_ value: UInt16, at index: Int) {
        precondition(index >= 0 && index + 1 < bytes.count, "setUInt16 outside written bytes")
        bytes[index] = UInt8(truncatingIfNeeded: value)
        bytes[index + 1] = UInt8(truncatingIfNeeded: value >> 8)
    }

    /// Overwrites an 8-bit field written earlier at `index`.
    public mutating func setUInt8(_ value: UInt8, at index: Int) {
        precondition(index >= 0 && index < bytes.count, "setUInt8 outside written bytes")
        bytes[index] = value
    }
}
