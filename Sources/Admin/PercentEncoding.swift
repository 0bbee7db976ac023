/// Percent-encoding of request targets (RFC 3986), for the server's routing and the CLI's
/// requests. Works on UTF-8 bytes: every byte outside the allowed ASCII set is escaped.
public enum PercentEncoding {
    /// What may stay as is in a path segment: unreserved characters and sub-delimiters, minus
    /// the ones a query or the router would read (`?`, `&`, `=`, `#`, `+`). `/` stays, so a
    /// document path keeps its segments.
    public static let pathAllowed = Set("!$'()*,-./:;@_~".utf8)
    /// What may stay as is in a query value.
    public static let queryAllowed = Set("-._~:@".utf8)

    public static func encode(_ text: String, allowing allowed: Set<UInt8>) -> String {
        var result = ""
        for byte in text.utf8 {
            if isAlphanumeric(byte) || allowed.contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + hexDigit(byte >> 4) + hexDigit(byte & 0x0F)
            }
        }
        return result
    }

    /// The text with `%XY` escapes decoded; nil when an escape is malformed or the bytes are
    /// not UTF-8.
    public static func decode(_ text: some StringProtocol) -> String? {
        var bytes: [UInt8] = []
        var input = text.utf8.makeIterator()
        while let byte = input.next() {
            guard byte == UInt8(ascii: "%") else { bytes.append(byte); continue }
            guard let high = input.next().flatMap(hexValue), let low = input.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func hexDigit(_ value: UInt8) -> String {
        String(UnicodeScalar(value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "A") + value - 10))
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
