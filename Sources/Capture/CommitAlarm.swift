/// Wakes the committer (``CaptureEngine/run()``) at its next deadline: one sleeping task, replaced
/// only when the deadline moves, so a steady stream costs one timer per commit.
struct CommitAlarm {
    let signal: AsyncStream<Void>.Continuation
    private var deadline: ContinuousClock.Instant?
    private var task: Task<Void, Never>?

    init(signal: AsyncStream<Void>.Continuation) {
        self.signal = signal
    }

    /// Arms the alarm for `next`, or disarms it for nil. An alarm already set for `next` that has
    /// not rung is left alone.
    mutating func set(_ next: ContinuousClock.Instant?) {
        if let deadline, deadline == next, deadline > .now { return }
        task?.cancel()
        deadline = next
        guard let next else {
            task = nil
            return
        }
        task = Task { [signal] in
            guard (try? await Task.sleep(until: next, clock: .continuous)) != nil else { return }
            signal.yield()
        }
    }

    mutating func cancel() { set(nil) }
}
