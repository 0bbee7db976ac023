extension ThreadExecutor {
    /// Suspends the calling task until `duration` has passed, woken by an alarm of this thread.
    ///
    /// Why not `Task.sleep`: its dispatch timer wakes libdispatch's manager and a pool thread
    /// when it ends (even after a cancellation), and a task that runs on this thread then hops
    /// back here. A task that prefers this executor (`withTaskExecutorPreference`) is resumed
    /// here by the alarm, and nothing else wakes.
    ///
    /// - throws: `CancellationError` when the task is cancelled first (at once, without waiting).
    public func sleep(for duration: Duration) async throws(CancellationError) {
        let sleeper = Sleeper()
        let rang = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let alarm = schedule(at: .now + duration) { sleeper.end(rang: true) }
                sleeper.wait(continuation, alarm: alarm)
            }
        } onCancel: {
            if let alarm = sleeper.end(rang: false) { cancel(alarm) }
        }
        if !rang { throw CancellationError() }
    }
}

/// One ``ThreadExecutor/sleep(for:)``: the alarm and the cancellation race to end it, and either
/// may come before the sleeper waits.
private final class Sleeper: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Bool, Never>?
        var alarm: ThreadExecutor.Alarm?
        /// Whether the alarm rang (true) or the task was cancelled (false), once either happened.
        var outcome: Bool?
    }

    private let state = LockedState(State())

    func wait(_ continuation: CheckedContinuation<Bool, Never>, alarm: ThreadExecutor.Alarm) {
        let outcome = state.withLock { state -> Bool? in
            if state.outcome == nil { (state.continuation, state.alarm) = (continuation, alarm) }
            return state.outcome
        }
        if let outcome { continuation.resume(returning: outcome) }
    }

    /// Ends the sleep if it has not ended; returns the alarm, for a cancellation to drop it.
    @discardableResult
    func end(rang: Bool) -> ThreadExecutor.Alarm? {
        let (continuation, alarm) = state.withLock { state -> (CheckedContinuation<Bool, Never>?, ThreadExecutor.Alarm?) in
            guard state.outcome == nil else { return (nil, nil) }
            state.outcome = rang
            defer { state.continuation = nil }
            return (state.continuation, state.alarm)
        }
        continuation?.resume(returning: rang)
        return alarm
    }
}
