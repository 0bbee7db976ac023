/// Writes JSON straight into bytes. Chunk documents hold thousands of numbers, and a generic
/// encoder spends most of its time on them; numbers here are written as fixed-point decimals
/// with trailing zeros trimmed, so a value keeps the precision asked for and no more.
public struct JSONWriter {
    public private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = [false]

    public init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    public mutating func beginObject() { separator(); bytes.append(UInt8(ascii: "{")); needsComma.append(false) }
    public mutating func endObject() { bytes.append(UInt8(ascii: "}")); needsComma.removeLast() }
    public mutating func beginArray() { separator(); bytes.append(UInt8(ascii: "[")); needsComma.append(false) }
    public mutating func endArray() { bytes.append(UInt8(ascii: "]")); needsComma.removeLast() }

    /// Starts a member; the next value written is its value.
    public mutating func key(_ name: String) {
        separator()
        writeString(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma[needsComma.count - 1] = false
    }

    public mutating func string(_ value: String) { separator(); writeString(value) }
    public mutating func bool(_ value: Bool) { separator(); bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8)) }
    public mutating func null() { separator(); bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C]) }
    public mutating func integer(_ value: Int64) { separator(); appendInteger(value) }
    public mutating func integer(_ value: Int) { integer(Int64(value)) }

    /// A number with at most `decimals` decimal places; non-finite values become `null`.
    public mutating func number(_ value: Double, decimals: Int) {
        separator()
        appendNumber(value, decimals: decimals)
    }

    private mutating func appendNumber(_ value: Double, decimals: Int) {
        var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &buffer) { raw in
            let start = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let count = Self.writeNumber(value, decimals: decimals, to: start)
            bytes.append(contentsOf: UnsafeBufferPointer(start: start, count: count))
        }
    }

    /// Writes `value` at `out` as a fixed-point decimal with at most `decimals` (0...8) places,
    /// trailing zeros trimmed; `null` when it is not finite, and its shortest text in quotes
    /// when it is too large for fixed point. Returns the bytes written, at most 32.
    @inline(__always)
    static func writeNumber(_ value: Double, decimals: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
        let places = min(max(decimals, 0), 8)
        let scale = power(places)
        guard value.isFinite, abs(value) < 9e15 / scale else {
            let text = value.isFinite ? "\"\(value)\"" : "null"
            var count = 0
            for byte in text.utf8.prefix(32) { out[count] = byte; count += 1 }
            return count
        }
        return writeScaled(Int64((value * scale).rounded()), places: places, to: out)
    }

    /// `writeNumber`'s text for a value already scaled by 10^`places` (0...8) and rounded: what
    /// ``ChunkBody`` stores, so that a point is rendered from it exactly as from its value.
    @inline(__always)
    static func writeScaled(_ scaled: Int64, places: Int, to out: UnsafeMutablePointer<UInt8>) -> Int {
        let scale = power(places)
        var fraction = scaled.magnitude % UInt64(scale), fractionPlaces = places
        if fraction == 0 {
            fractionPlaces = 0
        } else {
            while fraction % 10 == 0 { fraction /= 10; fractionPlaces -= 1 }
        }
        return writeDecimal(negative: scaled < 0, whole: scaled.magnitude / UInt64(scale), fraction: fraction,
                            places: fractionPlaces, to: out)
    }

    /// 10^places for 0...8, without an array (a lazily initialised global and a bounds check
    /// per number in a loop over thousands of them).
    @inline(__always)
    private static func power(_ places: Int) -> Double {
        var result = 1.0
        for _ in 0..<places { result *= 10 }
        return result
    }

    /// `-`, the whole part, and `.` with `places` fraction digits when `places` > 0, written
    /// right to left once the length is known. Returns the bytes written (at most 30).
    @inline(__always)
    private static func writeDecimal(negative: Bool, whole: UInt64, fraction: UInt64, places: Int,
                                     to out: UnsafeMutablePointer<UInt8>) -> Int {
        var wholeDigits = 1, rest = whole
        while rest >= 10 { rest /= 10; wholeDigits += 1 }
        let count = (negative ? 1 : 0) + wholeDigits + (places > 0 ? places + 1 : 0)
        var index = count
        rest = fraction
        for _ in 0..<places {
            index -= 1; out[index] = UInt8(48 + rest % 10); rest /= 10
        }
        if places > 0 { index -= 1; out[index] = UInt8(ascii: ".") }
        rest = whole
        for _ in 0..<wholeDigits {
            index -= 1; out[index] = UInt8(48 + rest % 10); rest /= 10
        }
        if negative { out[0] = UInt8(ascii: "-") }
        return count
    }

    private mutating func separator() {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    private mutating func appendInteger(_ value: Int64) {
        var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        withUnsafeMutableBytes(of: &buffer) { raw in
            let start = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
            let count = Self.writeDecimal(negative: value < 0, whole: value.magnitude, fraction: 0, places: 0, to: start)
            bytes.append(contentsOf: UnsafeBufferPointer(start: start, count: count))
        }
    }

    /// Appends what `compose` writes into a buffer on the stack, at once: a chunk's point is a
    /// dozen fragments and numbers, and appending each to the array checked its uniqueness and
    /// capacity every time.
    @inline(__always)
    mutating func appendComposed(_ compose: (inout Composer) -> Void) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Composer.capacity) { buffer in
            var composer = Composer(start: buffer.baseAddress!)
            compose(&composer)
            bytes.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress!, count: composer.count))
        }
    }

    /// A value composed like ``appendComposed(_:)``, after the comma it needs.
    mutating func composedValue(_ compose: (inout Composer) -> Void) {
        separator()
        appendComposed(compose)
    }

    /// A number as its shortest text that reads back as the same `Double` (what a column holds);
    /// `null` when it is not finite.
    mutating func exactNumber(_ value: Double) {
        guard value.isFinite else { return null() }
        separator()
        bytes.append(contentsOf: value.description.utf8)
    }

    /// A value that is JSON text already (a stored document's body), as it is.
    mutating func json(_ text: [UInt8]) {
        separator()
        bytes.append(contentsOf: text)
    }

    /// Bytes and numbers written one after the other into `appendComposed`'s buffer.
    struct Composer {
        /// A point is at most seven keys of under 20 bytes and six numbers of at most 32.
        static let capacity = 512
        let start: UnsafeMutablePointer<UInt8>
        private(set) var count = 0

        init(start: UnsafeMutablePointer<UInt8>) { self.start = start }

        @inline(__always)
        mutating func raw(_ fragment: [UInt8]) {
            precondition(count + fragment.count <= Self.capacity - 32, "a composed JSON run outgrew its buffer")
            fragment.withUnsafeBufferPointer { source in
                guard let base = source.baseAddress else { return }
                (start + count).update(from: base, count: source.count)
            }
            count += fragment.count
        }

        @inline(__always)
        public mutating func number(_ value: Double, decimals: Int) {
            precondition(count + 32 <= Self.capacity, "a composed JSON run outgrew its buffer")
            count += JSONWriter.writeNumber(value, decimals: decimals, to: start + count)
        }
    }

    private mutating func writeString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: bytes.append(contentsOf: [0x5C, 0x6E])
            case 0x0D: bytes.append(contentsOf: [0x5C, 0x72])
            case 0x09: bytes.append(contentsOf: [0x5C, 0x74])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
