/// Strings: the bytes between the quotes are checked as UTF-8 as they are scanned, so that an
/// invalid byte is reported where it is; escapes are decoded into a side buffer only when a
/// string has any, so most strings become a `String` straight from the input.
extension JSONParser {
    /// The string whose opening quote is at `index`; leaves `index` after the closing quote.
    mutating func parseString() throws(JSONError) -> String {
        let start = index
        index += 1
        var segmentStart = index
        var unescaped: [UInt8] = []
        var hasEscapes = false
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text: String
                if hasEscapes {
                    unescaped.append(contentsOf: bytes[segmentStart..<index])
                    text = String(decoding: unescaped, as: UTF8.self)
                } else {
                    text = String(decoding: bytes[segmentStart..<index], as: UTF8.self)
                }
                index += 1
                return text
            } else if byte == UInt8(ascii: "\\") {
                hasEscapes = true
                unescaped.append(contentsOf: bytes[segmentStart..<index])
                try parseEscape(into: &unescaped, stringStart: start)
                segmentStart = index
            } else if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                // A string cannot span lines, so a line break inside one almost always means
                // its closing quote is missing: say where the string began.
                throw failure("unterminated string starting", at: start, hint: "it reaches the end of the line")
            } else if byte < 0x20 {
                throw failure("unescaped control character \(Self.codePoint(UInt32(byte))) in string", at: index)
            } else if byte < 0x80 {
                index += 1
            } else if let length = utf8SequenceLength(at: index) {
                index += length
            } else {
                throw failure("invalid UTF-8", at: index)
            }
        }
        throw failure("unterminated string starting", at: start)
    }

    /// Decodes the escape whose backslash is at `index` and steps over it.
    private mutating func parseEscape(into buffer: inout [UInt8], stringStart: Int) throws(JSONError) {
        let backslash = index
        guard index + 1 < bytes.count else { throw failure("unterminated string starting", at: stringStart) }
        let code = bytes[index + 1]
        index += 2
        switch code {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): buffer.append(code)
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"): try parseUnicodeEscape(into: &buffer, backslash: backslash, stringStart: stringStart)
        default:
            let shown = (0x21...0x7E).contains(code) ? "\\" + String(UnicodeScalar(code)) : "\\ followed by \(describeCharacter(at: backslash + 1) ?? "an invalid UTF-8 byte")"
            throw failure("invalid escape \(shown)", at: backslash)
        }
    }

    /// `\uXXXX`, with `index` after the `u`: a UTF-16 code unit, so a character beyond the
    /// Basic Multilingual Plane takes two escapes (a surrogate pair), and half a pair is not
    /// a character at all.
    private mutating func parseUnicodeEscape(into buffer: inout [UInt8], backslash: Int, stringStart: Int) throws(JSONError) {
        let first = try parseHex(backslash: backslash, stringStart: stringStart)
        var value = UInt32(first)
        switch first {
        case 0xD800...0xDBFF:
            let lowBackslash = index
            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw failure("lone surrogate \(Self.escapeText(first))", at: backslash)
            }
            index += 2
            let second = try parseHex(backslash: lowBackslash, stringStart: stringStart)
            guard (0xDC00...0xDFFF).contains(second) else { throw failure("lone surrogate \(Self.escapeText(first))", at: backslash) }
            value = 0x10000 + (UInt32(first - 0xD800) << 10) + UInt32(second - 0xDC00)
        case 0xDC00...0xDFFF:
            throw failure("lone surrogate \(Self.escapeText(first))", at: backslash)
        default:
            break
        }
        guard let scalar = Unicode.Scalar(value) else { throw failure("lone surrogate \(Self.escapeText(first))", at: backslash) }
        UTF8.encode(scalar) { buffer.append($0) }
    }

    /// The four hex digits at `index`.
    private mutating func parseHex(backslash: Int, stringStart: Int) throws(JSONError) -> UInt16 {
        var value: UInt16 = 0
        for offset in 0..<4 {
            guard index < bytes.count else { throw failure("unterminated string starting", at: stringStart) }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default:
                // Show what was written, up to the byte that is not a hex digit when it prints.
                let written = bytes[(index - offset)..<index] + ((0x21...0x7E).contains(byte) ? [byte] : [])
                throw failure("invalid escape \\u\(String(decoding: written, as: UTF8.self))", at: backslash)
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    static func escapeText(_ unit: UInt16) -> String {
        let hex = String(unit, radix: 16, uppercase: true)
        return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    }
}
