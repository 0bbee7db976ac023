/// UTF-8 well-formedness as RFC 3629 defines it: no overlong forms, no encoded surrogates,
/// nothing beyond U+10FFFF. Checked byte by byte so that an error can name the offending byte.
extension JSONParser {
    /// The length of the well-formed sequence that starts at `offset`, or nil.
    func utf8SequenceLength(at offset: Int) -> Int? {
        guard offset < bytes.count else { return nil }
        let lead = bytes[offset]
        // The range the second byte must fall in depends on the lead byte; later bytes are
        // plain continuation bytes.
        let length: Int
        let second: ClosedRange<UInt8>
        switch lead {
        case 0x00...0x7F: return 1
        case 0xC2...0xDF: length = 2; second = 0x80...0xBF
        case 0xE0: length = 3; second = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3; second = 0x80...0xBF
        case 0xED: length = 3; second = 0x80...0x9F
        case 0xF0: length = 4; second = 0x90...0xBF
        case 0xF1...0xF3: length = 4; second = 0x80...0xBF
        case 0xF4: length = 4; second = 0x80...0x8F
        default: return nil
        }
        guard offset + length <= bytes.count, second.contains(bytes[offset + 1]) else { return nil }
        for next in (offset + 2)..<(offset + length) where bytes[next] & 0xC0 != 0x80 { return nil }
        return length
    }

    /// The scalar that starts at `offset`, when the bytes there are well-formed.
    func scalar(at offset: Int) -> Unicode.Scalar? {
        guard let length = utf8SequenceLength(at: offset) else { return nil }
        var value = length == 1 ? UInt32(bytes[offset]) : UInt32(bytes[offset]) & (0x7F >> length)
        for next in (offset + 1)..<(offset + length) { value = value << 6 | UInt32(bytes[next] & 0x3F) }
        return Unicode.Scalar(value)
    }
}
