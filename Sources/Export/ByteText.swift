import GyroStore

/// Numbers and text written straight into a byte buffer, from the integers the store keeps
/// (times in microseconds, axes in 1e-5 units): exact decimal text with no floating point on
/// the way, and no `String` a sample, which a 4-hour 400 Hz export would make millions of.
extension Array where Element == UInt8 {
    mutating func append(_ text: StaticString) {
        text.withUTF8Buffer { append(contentsOf: $0) }
    }

    mutating func append(text: String) { append(contentsOf: text.utf8) }

    /// `value` in decimal.
    mutating func append(integer value: Int64) {
        if value < 0 { append(UInt8(ascii: "-")) }
        appendDigits(value.magnitude, width: 1)
    }

    /// `value`'s digits, zero-padded to at least `width`.
    mutating func appendDigits(_ value: UInt64, width: Int) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var count = 0
        Swift.withUnsafeMutableBytes(of: &digits) { raw in
            var rest = value
            repeat {
                raw[23 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            } while rest > 0 || count < Swift.min(width, 20)
        }
        Swift.withUnsafeBytes(of: &digits) { raw in append(contentsOf: raw[(24 - count)...]) }
    }

    /// `value`, which has `scale` decimals, with exactly `places` (≤ `scale`) of them, rounded
    /// half away from zero: `fixed(-12345, scale: 5, places: 3)` is `-0.123`.
    mutating func append(fixed value: Int64, scale: Int, places: Int) {
        var divisor: UInt64 = 1
        for _ in 0..<(scale - places) { divisor *= 10 }
        var rounded = value.magnitude / divisor
        if value.magnitude % divisor >= (divisor + 1) / 2, divisor > 1 { rounded += 1 }
        var unit: UInt64 = 1
        for _ in 0..<places { unit *= 10 }
        if value < 0 && rounded > 0 { append(UInt8(ascii: "-")) }
        appendDigits(rounded / unit, width: 1)
        if places > 0 {
            append(UInt8(ascii: "."))
            appendDigits(rounded % unit, width: places)
        }
    }

    /// `value`, which has `scale` decimals, with its trailing zeros trimmed, as the gateway's
    /// JSON documents write numbers: `trimmed(48780, scale: 5)` is `0.4878`, `200000` is `2`.
    mutating func append(trimmed value: Int64, scale: Int) {
        var places = scale, rest = value.magnitude
        while places > 0 && rest % 10 == 0 { rest /= 10; places -= 1 }
        append(fixed: value < 0 ? -Int64(rest) : Int64(rest), scale: places, places: places)
    }

    /// A point's axis in its stream's unit, trimmed like the documents; `null` for a value the
    /// document writes as `null`.
    mutating func append(axis value: Int64, orNull null: StaticString) {
        if value == ChunkBody.Point.missingValue { append(null); return }
        append(trimmed: value, scale: 5)
    }
}

extension ChunkBody.Point {
    /// The stored form of an axis the sensor gave no finite value for.
    static let missingValue = Int64.min
}
