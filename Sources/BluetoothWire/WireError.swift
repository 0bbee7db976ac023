/// Why bytes from the wire could not be decoded.
///
/// Every decoder in the BLE layers throws this one type, so a caller can log the failure and
/// drop the packet without a crash (bumble's `Host.on_packet` does the same). The `offset` is
/// counted from the start of the buffer handed to the decoder; `field` names the spec field
/// that was being read. A peer or a controller sent the bytes, so a `WireError` means *they*
/// broke the format, never that the host has a bug.
public enum WireError: Error, Equatable, Sendable {
    /// A read needed `needed` bytes at `offset`, but only `available` were left.
    case truncated(needed: Int, available: Int, offset: Int)
    /// A fixed-length structure ended at `offset` with `count` bytes still unread.
    case trailingBytes(count: Int, offset: Int)
    /// A length field (`field`) disagrees with the number of bytes that carry it.
    case lengthMismatch(field: String, declared: Int, actual: Int)
    /// A field holds a value the spec forbids in this position.
    case invalidValue(field: String, value: Int, reason: String)
    /// Text (an address or a UUID string) did not match the expected form.
    case malformedText(String, expected: String)
}

extension WireError: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .truncated(needed, available, offset):
            return "truncated input: needed \(needed) byte(s) at offset \(offset) but only \(available) remain"
        case let .trailingBytes(count, offset):
            return "unexpected \(count) trailing byte(s) at offset \(offset) after a fixed-length structure"
        case let .lengthMismatch(field, declared, actual):
            return "length mismatch: \(field) declares \(declared) byte(s) but \(actual) are present"
        case let .invalidValue(field, value, reason):
            return "invalid \(field) value \(value): \(reason)"
        case let .malformedText(text, expected):
            return "malformed text \"\(text)\": expected \(expected)"
        }
    }
}
