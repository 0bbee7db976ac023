import FoundationEssentials

extension Date {
    /// `2026-11-26T19:27:58Z` (see `iso8601UTC(epochSeconds:)`).
    public var iso8601UTC: String {
        let seconds = timeIntervalSince1970.rounded(.down)
        // Far beyond any clock (±31 million years): named as such rather than trapping on Int(_:).
        guard seconds.isFinite, abs(seconds) < 1e15 else { return seconds < 0 ? "-inf" : "+inf" }
        return ZoneInfo.iso8601UTC(epochSeconds: Int(seconds))
    }
}
