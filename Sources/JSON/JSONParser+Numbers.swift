/// Numbers: the RFC's grammar (`-? int frac? exp?`, no leading zeros, no `+`, no bare `.`),
/// then the same split into `.integer` and `.number` that JSONDecoder made when it decoded
/// `JSONValue`, so that documents read as before:
///
/// - an integer literal that fits `Int64` is that integer (`-0` is 0);
/// - otherwise the value as a `Double`, which is an error when infinite (`1e400`);
/// - a `Double` with an integral value in `Int64`'s range is an integer (`1.0`, `1e2`,
///   `100e-2`, even `1e-400`), except that from 2^53 on, where doubles are too coarse, the
///   digits as written decide (`writtenInteger`): `9007199254740993.0` is that integer,
///   `12345678901234567890` and `9223372036854775808` are doubles.
extension JSONParser {
    /// The number starting at `index` (a `-` or a digit).
    mutating func parseNumber() throws(JSONError) -> JSONValue {
        let start = index
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let integerStart = index
        guard index < bytes.count, Self.isDigit(bytes[index]) else { throw unexpected(.digit) }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, Self.isDigit(bytes[index]) { throw failure("leading zero in number", at: start) }
        } else {
            skipDigits()
        }
        let integerEnd = index
        var isIntegerLiteral = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isIntegerLiteral = false
            index += 1
            guard index < bytes.count, Self.isDigit(bytes[index]) else { throw unexpected(.digit) }
            skipDigits()
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isIntegerLiteral = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, Self.isDigit(bytes[index]) else { throw unexpected(.digit) }
            skipDigits()
        }
        if isIntegerLiteral, let value = integer(digits: integerStart..<integerEnd, negative: negative) { return .integer(value) }
        return try classify(start..<index)
    }

    /// The digits as an `Int64`, or nil when out of range. A negative number is accumulated
    /// downwards so that `Int64.min` fits.
    private func integer(digits: Range<Int>, negative: Bool) -> Int64? {
        var value: Int64 = 0
        for offset in digits {
            let digit = Int64(bytes[offset] &- UInt8(ascii: "0"))
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, carry) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
            if overflow || carry { return nil }
            value = next
        }
        return value
    }

    /// A number with a fraction or exponent, or an integer literal beyond `Int64`.
    private func classify(_ range: Range<Int>) throws(JSONError) -> JSONValue {
        let text = String(decoding: bytes[range], as: UTF8.self)
        guard let double = Double(text), double.isFinite else {
            let shown = text.count > 40 ? text.prefix(40) + "…" : Substring(text)
            throw failure("number \(shown) out of range", at: range.lowerBound)
        }
        guard let integer = Int64(exactly: double) else { return .number(double) }
        if double.magnitude < 0x1p53 { return .integer(integer) }
        return writtenInteger(range).map(JSONValue.integer) ?? .number(double)
    }

    /// The number as written, as JSONDecoder converted it through `Decimal`: the significant
    /// digits (trailing zeros dropped) must fit a `UInt64`, any fraction is cut off, and the
    /// magnitude must be at most `Int64.max` (so `-9223372036854775808.0` is a double, and
    /// `9007199254740993.5` is 9007199254740993 while `9007199254740993.99999999999999999999`
    /// is a double). Keeping these quirks keeps every document reading as it did.
    private func writtenInteger(_ range: Range<Int>) -> Int64? {
        var offset = range.lowerBound
        let negative = bytes[offset] == UInt8(ascii: "-")
        if negative { offset += 1 }
        var digits: [UInt8] = []
        var integerDigits = 0
        var inFraction = false
        var exponent = 0
        var exponentSign = 1
        while offset < range.upperBound {
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "."): inFraction = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                if offset < range.upperBound, bytes[offset] == UInt8(ascii: "-") || bytes[offset] == UInt8(ascii: "+") {
                    if bytes[offset] == UInt8(ascii: "-") { exponentSign = -1 }
                    offset += 1
                }
                // Saturates: a value this code sees lies in 2^53...2^63, so only absurd
                // spellings (thousands of zeros) have large exponents at all.
                for digitOffset in offset..<range.upperBound {
                    exponent = min(exponent * 10 + Int(bytes[digitOffset] &- UInt8(ascii: "0")), 1_000_000_000)
                }
                offset = range.upperBound
            default:
                // Leading zeros carry no value and would only shift the decimal point.
                if digits.isEmpty, byte == UInt8(ascii: "0") {
                    if !inFraction { continue }
                    integerDigits -= 1
                    continue
                }
                digits.append(byte &- UInt8(ascii: "0"))
                if !inFraction { integerDigits += 1 }
            }
        }
        let pointPosition = integerDigits + exponentSign * exponent
        while digits.last == 0 { digits.removeLast() }
        var mantissa: UInt64 = 0
        for digit in digits {
            let (shifted, overflow) = mantissa.multipliedReportingOverflow(by: 10)
            let (next, carry) = shifted.addingReportingOverflow(UInt64(digit))
            if overflow || carry { return nil }
            mantissa = next
        }
        // 19 digits or fewer; more is at least 10^19, beyond Int64.
        guard pointPosition <= 19 else { return nil }
        var magnitude: UInt64 = 0
        for position in 0..<max(pointPosition, 0) {
            let digit = position < digits.count ? UInt64(digits[position]) : 0
            let (shifted, overflow) = magnitude.multipliedReportingOverflow(by: 10)
            let (next, carry) = shifted.addingReportingOverflow(digit)
            if overflow || carry { return nil }
            magnitude = next
        }
        guard let value = Int64(exactly: magnitude) else { return nil }
        return negative ? -value : value
    }

    private mutating func skipDigits() {
        while index < bytes.count, Self.isDigit(bytes[index]) { index += 1 }
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }
}
