/// Wakes the committer (``CaptureEngine/run()``) at a deadline: one sleeping task.
///
/// Every task that sleeps arms a dispatch timer (a wake-up of libdispatch's manager thread) and
/// every cancellation wakes the task, so the alarm is replaced only when it must ring earlier. One
/// that rings too early, or when nothing is due any more, costs one look at the deadlines.
struct CommitAlarm {
    let signal: AsyncStream<Void>.Continuation
    private var deadline: ContinuousClock.Instant?
    private var task: Task<Void, Never>?

    init(signal: AsyncStream<Void>.Continuation) {
        self.signal = signal
    }

    /// Makes sure the alarm rings at `next` or before it (nil: nothing to wake for).
    mutating func set(_ next: ContinuousClock.Instant?) {
        if let deadline, deadline > .now {
            guard let next, next < deadline else { return }
            task?.cancel()
        }
        deadline = next
        task = next.map { next in
            Task { [signal] in
                guard (try? await Task.sleep(until: next, clock: .continuous)) != nil else { return }
                signal.yield()
            }
        }
    }

    mutating func cancel() {
        task?.cancel()
        (task, deadline) = (nil, nil)
    }
}
