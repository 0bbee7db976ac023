/// Writes JSON straight into bytes. Chunk documents hold thousands of numbers, and a generic
/// encoder spends most of its time on them; numbers here are written as fixed-point decimals
/// with trailing zeros trimmed, so a value keeps the precision asked for and no more.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = [false]

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    mutating func beginObject() { separator(); bytes.append(UInt8(ascii: "{")); needsComma.append(false) }
    mutating func endObject() { bytes.append(UInt8(ascii: "}")); needsComma.removeLast() }
    mutating func beginArray() { separator(); bytes.append(UInt8(ascii: "[")); needsComma.append(false) }
    mutating func endArray() { bytes.append(UInt8(ascii: "]")); needsComma.removeLast() }

    /// Starts a member; the next value written is its value.
    mutating func key(_ name: String) {
        separator()
        writeString(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma[needsComma.count - 1] = false
    }

    mutating func string(_ value: String) { separator(); writeString(value) }
    mutating func bool(_ value: Bool) { separator(); bytes.append(contentsOf: value ? Array("true".utf8) : Array("false".utf8)) }
    mutating func null() { separator(); bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C]) }
    mutating func integer(_ value: Int64) { separator(); appendInteger(value) }
    mutating func integer(_ value: Int) { integer(Int64(value)) }

    /// Appends bytes that are already valid JSON (a precomputed `"key":` or punctuation),
    /// for the hot loop of chunk documents.
    mutating func raw(_ fragment: [UInt8]) { bytes.append(contentsOf: fragment) }

    /// A number with no separator handling, after a `raw` key.
    mutating func rawNumber(_ value: Double, decimals: Int) { appendNumber(value, decimals: decimals) }

    /// A number with at most `decimals` decimal places; non-finite values become `null`.
    mutating func number(_ value: Double, decimals: Int) {
        separator()
        appendNumber(value, decimals: decimals)
    }

    private mutating func appendNumber(_ value: Double, decimals: Int) {
        let places = min(max(decimals, 0), 8)
        let scale = Self.power(places)
        guard value.isFinite, abs(value) < 9e15 / scale else {
            if value.isFinite { writeString(String(value)); return }
            bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
            return
        }
        let scaled = Int64((value * scale).rounded())
        var fraction = scaled.magnitude % UInt64(scale), fractionPlaces = places
        if fraction == 0 {
            fractionPlaces = 0
        } else {
            while fraction % 10 == 0 { fraction /= 10; fractionPlaces -= 1 }
        }
        appendDecimal(negative: scaled < 0, whole: scaled.magnitude / UInt64(scale), fraction: fraction, places: fractionPlaces)
    }

    /// 10^places for 0...8, without an array (a lazily initialised global and a bounds check
    /// per number in a loop over thousands of them).
    private static func power(_ places: Int) -> Double {
        var result = 1.0
        for _ in 0..<places { result *= 10 }
        return result
    }

    /// `-`, the whole part, and `.` with `places` fraction digits when `places` > 0: composed
    /// right to left in a buffer on the stack and appended at once (one capacity check per
    /// number instead of one per digit).
    private mutating func appendDecimal(negative: Bool, whole: UInt64, fraction: UInt64, places: Int) {
        var buffer: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)  // 32 bytes: sign, 20 digits, '.', 8 digits
        withUnsafeMutableBytes(of: &buffer) { digits in
            var index = digits.count
            var rest = fraction
            for _ in 0..<places {
                index -= 1; digits[index] = UInt8(48 + rest % 10); rest /= 10
            }
            if places > 0 { index -= 1; digits[index] = UInt8(ascii: ".") }
            rest = whole
            repeat {
                index -= 1; digits[index] = UInt8(48 + rest % 10); rest /= 10
            } while rest > 0
            if negative { index -= 1; digits[index] = UInt8(ascii: "-") }
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: digits[index...]))
        }
    }

    private mutating func separator() {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    private mutating func appendInteger(_ value: Int64) {
        appendDecimal(negative: value < 0, whole: value.magnitude, fraction: 0, places: 0)
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
