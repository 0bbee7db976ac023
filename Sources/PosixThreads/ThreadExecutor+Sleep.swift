extension ThreadExecutor {
    /// Suspends the calling task until `seconds` have passed (up to `tolerance` later, at a
    /// wake-up the thread makes anyway), on a timer of this executor.
    ///
    /// Why not `Task.sleep`: its dispatch timer wakes libdispatch's manager and a pool thread
    /// when it ends, also when the task was cancelled long before. A task that prefers this
    /// executor (`withTaskExecutorPreference`) is resumed here by the timer, and nothing else wakes.
    ///
    /// - throws: `CancellationError` when the task is cancelled first, at once (the cancellation
    ///   rings the alarm; one rung before the timer is set fires it as it is set).
    public func sleep(for seconds: Double, tolerance: Double = 0) async throws(CancellationError) {
        let alarm = makeAlarm()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                schedule(after: seconds, tolerance: tolerance, alarm: alarm) { continuation.resume() }
            }
        } onCancel: {
            ring(alarm)
        }
        if Task.isCancelled { throw CancellationError() }
    }

    /// ``sleep(for:tolerance:)`` for a `Duration`, without tolerance.
    public func sleep(for duration: Duration) async throws(CancellationError) {
        let parts = duration.components
        try await sleep(for: Double(parts.seconds) + Double(parts.attoseconds) * 1e-18)
    }
}
