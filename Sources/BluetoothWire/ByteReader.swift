/// A bounds-checked, little-endian cursor over received bytes.
///
/// Bluetooth multi-octet fields are little-endian (Core v5.4, Vol 4, Part E, 5.2 and
/// Vol 3, Part A, 3), so that is the only byte order offered. Every read checks the remaining
/// length first and throws ``WireError/truncated(needed:available:offset:)`` instead of trapping,
/// whatever the input. A reader never copies the bytes it is given.
///
/// For example:
///
///     var reader = ByteReader([0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
///     let code = try reader.readUInt8()
///     let length = try reader.readUInt8()
public struct ByteReader: Sendable {
    /// The bytes being read. Its indices are those of the slice handed to `init`.
    public let bytes: ArraySlice<UInt8>
    /// The index in ``bytes`` of the next byte to read.
    public private(set) var readIndex: Int

    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.readIndex = bytes.startIndex
    }

    public init(_ bytes: [UInt8]) {
        self.init(bytes[...])
    }

    /// How many bytes have been consumed: the offset reported in errors.
    @inlinable public var offset: Int { readIndex - bytes.startIndex }

    /// How many bytes are left to read.
    @inlinable public var remainingCount: Int { bytes.endIndex - readIndex }

    /// Whether every byte has been read.
    @inlinable public var isAtEnd: Bool { readIndex >= bytes.endIndex }

    @inlinable
    mutating func require(_ count: Int) throws(WireError) {
        guard count >= 0, count <= remainingCount else {
            throw .truncated(needed: count, available: remainingCount, offset: offset)
        }
    }

    public mutating func readUInt8() throws(WireError) -> UInt8 {
        try require(1)
        defer { readIndex += 1 }
        return bytes[readIndex]
    }

    public mutating func readInt8() throws(WireError) -> Int8 {
        Int8(bitPattern: try readUInt8())
    }

    public mutating func readUInt16() throws(WireError) -> UInt16 {
        try require(2)
        defer { readIndex += 2 }
        return UInt16(bytes[readIndex]) | UInt16(bytes[readIndex + 1]) << 8
    }

    public mutating func readUInt24() throws(WireError) -> UInt32 {
        try require(3)
        defer { readIndex += 3 }
        return UInt32(bytes[readIndex]) | UInt32(bytes[readIndex + 1]) << 8 | UInt32(bytes[readIndex + 2]) << 16
    }

    public mutating func readUInt32() throws(WireError) -> UInt32 {
        try require(4)
        var value: UInt32 = 0
        for i in 0..<4 { value |= UInt32(bytes[readIndex + i]) << (8 * i) }
        readIndex += 4
        return value
    }

    public mutating func readUInt64() throws(WireError) -> UInt64 {
        try require(8)
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(bytes[readIndex + i]) << (8 * i) }
        readIndex += 8
        return value
    }

    /// Reads `count` bytes without copying them.
    public mutating func readSlice(_ count: Int) throws(WireError) -> ArraySlice<UInt8> {
        try require(count)
        defer { readIndex += count }
        return bytes[readIndex..<readIndex + count]
    }

    /// Reads `count` bytes into a new array.
    public mutating func readBytes(_ count: Int) throws(WireError) -> [UInt8] {
        Array(try readSlice(count))
    }

    /// Reads everything that is left (possibly nothing) without copying.
    public mutating func readRemainingSlice() -> ArraySlice<UInt8> {
        defer { readIndex = bytes.endIndex }
        return bytes[readIndex...]
    }

    /// Reads everything that is left (possibly nothing) into a new array.
    public mutating func readRemainingBytes() -> [UInt8] {
        Array(readRemainingSlice())
    }

    /// Returns the next byte without consuming it, or `nil` at the end.
    public func peekUInt8() -> UInt8? {
        isAtEnd ? nil : bytes[readIndex]
    }

    /// Skips `count` bytes.
    public mutating func skip(_ count: Int) throws(WireError) {
        try require(count)
        readIndex += count
    }

    /// Throws ``WireError/trailingBytes(count:offset:)`` unless every byte was read.
    ///
    /// Call it at the end of fixed-length structures so that a peer's malformed PDU is rejected
    /// rather than silently half-read.
    public func expectEnd() throws(WireError) {
        guard isAtEnd else { throw .trailingBytes(count: remainingCount, offset: offset) }
    }
}
