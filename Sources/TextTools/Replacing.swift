extension StringProtocol {
    /// Every `character` replaced by `replacement`.
    ///
    /// Why not `replacing(_:with:)`: it comes from _StringProcessing, and these few calls were
    /// all the running gateway used of it; they made the kernel map that library's code (and
    /// the regex parser beside it) into every gateway's memory.
    public func replacingEvery(_ character: Character, with replacement: String) -> String {
        var result = ""
        result.reserveCapacity(utf8.count)
        for next in self {
            if next == character { result += replacement } else { result.append(next) }
        }
        return result
    }
}
