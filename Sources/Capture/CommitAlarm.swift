import PosixThreads

/// Wakes the committer (``CaptureEngine/run()``) at a deadline: one timer of the writer's thread,
/// the thread the committer runs on, so ringing wakes that thread only.
///
/// The alarm is replaced only when it must ring earlier. One that rings too early, or when
/// nothing is due any more, costs one look at the deadlines.
struct CommitAlarm {
    let signal: AsyncStream<Void>.Continuation
    let executor: ThreadExecutor
    private var deadline: ContinuousClock.Instant?
    private var alarm: ThreadExecutor.Alarm?

    init(signal: AsyncStream<Void>.Continuation, executor: ThreadExecutor) {
        self.signal = signal
        self.executor = executor
    }

    /// Makes sure the alarm rings at `next` or before it (nil: nothing to wake for).
    mutating func set(_ next: ContinuousClock.Instant?) {
        if let deadline, deadline > .now {
            guard let next, next < deadline else { return }
        }
        cancel()
        deadline = next
        alarm = next.map { [signal] next in executor.schedule(at: next) { signal.yield() } }
    }

    mutating func cancel() {
        if let alarm { executor.cancel(alarm) }
        (alarm, deadline) = (nil, nil)
    }
}
