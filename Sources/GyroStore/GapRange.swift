import CaptureValues

/// Samples that were expected and never stored: sample indices `fromIndex...toIndex` of one
/// stream (inclusive), the times they were due, how many, and why.
public struct GapRange: Codable, Sendable, Equatable {
    public var stream: String
    public var fromIndex: Int64
    public var toIndex: Int64
    public var fromMs: Double
    public var toMs: Double
    public var missing: Int64
    public var reason: GapReason

    public init(stream: String, fromIndex: Int64, toIndex: Int64, fromMs: Double, toMs: Double, missing: Int64, reason: GapReason) {
        self.stream = stream
        self.fromIndex = fromIndex
        self.toIndex = toIndex
        self.fromMs = fromMs
        self.toMs = toMs
        self.missing = missing
        self.reason = reason
    }
}

extension GapRange {
    /// Grows this gap to end where `next`, which follows it directly, ends.
    public mutating func extend(to next: GapRange) {
        toIndex = next.toIndex
        toMs = next.toMs
        missing += next.missing
    }
}
