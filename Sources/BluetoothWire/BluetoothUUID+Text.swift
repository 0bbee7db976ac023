extension BluetoothUUID: CustomStringConvertible {
    /// `"180D"` for SIG 16-bit UUIDs, otherwise the upper-case 8-4-4-4-12 form.
    public var description: String {
        if let short = uuid16 { return Self.hex(UInt64(short), digits: 4) }
        let h = Self.hex(high, digits: 16)
        let l = Self.hex(low, digits: 16)
        let hc = Array(h)
        let lc = Array(l)
        return String(hc[0..<8]) + "-" + String(hc[8..<12]) + "-" + String(hc[12..<16]) + "-"
            + String(lc[0..<4]) + "-" + String(lc[4..<16])
    }

    static func hex(_ value: UInt64, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

extension BluetoothUUID {
    /// Parses `"180D"`, `"0x180D"`, a 32-bit `"0000180D"` or the 8-4-4-4-12 form
    /// (case-insensitive).
    public init(parsing text: String) throws(WireError) {
        var body = Substring(text)
        if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
        let expected = "4 or 8 hex digits, or 8-4-4-4-12 hex digits"
        guard body.allSatisfy({ $0 == "-" || $0.isHexDigit }) else { throw .malformedText(text, expected: expected) }
        if body.count == 4 || body.count == 8, !body.contains("-") {
            guard let value = UInt32(body, radix: 16) else { throw .malformedText(text, expected: expected) }
            self.init(uuid32: value)
            return
        }
        let groups = body.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12] else { throw .malformedText(text, expected: expected) }
        let joined = groups.joined()
        guard let high = UInt64(joined.prefix(16), radix: 16), let low = UInt64(joined.suffix(16), radix: 16) else {
            throw .malformedText(text, expected: expected)
        }
        self.init(high: high, low: low)
    }
}
