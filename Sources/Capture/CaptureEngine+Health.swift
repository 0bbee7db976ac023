extension CaptureEngine {
    /// How long the oldest change not yet committed has waited, or `nil` when nothing waits.
    /// The watchdog uses it to tell a stalled pipeline from an idle one.
    public func uncommittedAge() -> Duration? {
        guard let pendingSince else { return nil }
        return ContinuousClock.now - pendingSince
    }
}
