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
        guard value.isFinite, abs(value) < 9e15 / Self.powers[decimals] else {
            if value.isFinite { writeString(String(value)); return }
            bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
            return
        }
        var scaled = Int64((value * Self.powers[decimals]).rounded())
        if scaled < 0 { bytes.append(UInt8(ascii: "-")); scaled = -scaled }
        let divisor = Int64(Self.powers[decimals])
        appendInteger(scaled / divisor)
        var fraction = scaled % divisor, places = decimals
        guard fraction != 0 else { return }
        while fraction % 10 == 0 { fraction /= 10; places -= 1 }
        bytes.append(UInt8(ascii: "."))
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (48, 48, 48, 48, 48, 48, 48, 48, 48)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = places - 1
            while index >= 0 { buffer[index] = UInt8(48 + fraction % 10); fraction /= 10; index -= 1 }
            bytes.append(contentsOf: buffer[0..<places])
        }
    }

    private static let powers: [Double] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000]

    private mutating func separator() {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    private mutating func appendInteger(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        if magnitude < 10 { bytes.append(UInt8(48 + magnitude)); return }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var index = 0
            while magnitude > 0 { buffer[index] = UInt8(48 + magnitude % 10); magnitude /= 10; index += 1 }
            while index > 0 { index -= 1; bytes.append(buffer[index]) }
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
