/// Hex text for logs and test vectors.
///
/// Build hex dumps lazily (only at trace level): eager formatting is what halves bumble's
/// throughput (`docs/bumble-test-peer.md`).
extension Sequence<UInt8> {
    /// Lower-case hex with a space between bytes, e.g. `"0e 04 01"`.
    public var hexDump: String {
        var text = ""
        for byte in self {
            if !text.isEmpty { text.append(" ") }
            text.append(Hex.digits[Int(byte >> 4)])
            text.append(Hex.digits[Int(byte & 0x0F)])
        }
        return text
    }
}

/// Hex parsing helpers.
public enum Hex {
    static let digits: [Character] = Array("0123456789abcdef")

    /// Parses hex text such as `"0e 04 01 03 0c 00"` or `"0E0401"`; spaces, colons and dashes
    /// between bytes are ignored. Returns `nil` for anything else or an odd digit count.
    public static func bytes(_ text: String) -> [UInt8]? {
        var result: [UInt8] = []
        var high: UInt8?
        for scalar in text.unicodeScalars {
            if scalar == " " || scalar == ":" || scalar == "-" || scalar == "\n" { continue }
            guard let nibble = nibble(scalar) else { return nil }
            if let h = high {
                result.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return high == nil ? result : nil
    }

    static func nibble(_ scalar: Unicode.Scalar) -> UInt8? {
        switch scalar.value {
        case 0x30...0x39: return UInt8(scalar.value - 0x30)
        case 0x41...0x46: return UInt8(scalar.value - 0x41 + 10)
        case 0x61...0x66: return UInt8(scalar.value - 0x61 + 10)
        default: return nil
        }
    }
}
