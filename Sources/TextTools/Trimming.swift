extension StringProtocol {
    /// Without the leading and trailing characters `isTrimmed` picks: white space and line
    /// breaks by default, `\.isNewline` for line breaks only.
    public func trimmed(where isTrimmed: (Character) -> Bool = \.isWhitespace) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) }) else { return "" }
        return String(self[first...last])
    }
}
