/// Hex formatting without Foundation, for descriptions and error messages.
enum Hex {
    private static let digits: [Character] = Array("0123456789abcdef")

    /// Two lowercase hex digits.
    static func byte(_ value: UInt8) -> String {
        String([digits[Int(value >> 4)], digits[Int(value & 0x0F)]])
    }

    /// Bytes as `13 03 28 00`.
    static func bytes<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        bytes.map(byte).joined(separator: " ")
    }
}
