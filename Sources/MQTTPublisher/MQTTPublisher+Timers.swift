import PosixThreads

extension MQTTPublisher {
    /// Puts `event` in the publisher's stream once `delay` has passed, from an alarm of the
    /// store writer's thread, which the publisher and its event loop run on.
    ///
    /// Why not a task that sleeps: its dispatch timer wakes libdispatch's manager and a pool
    /// thread when it ends, and the connect timeout's ended 15 s after every connection that
    /// succeeded. The alarm's yield resumes the event loop on this thread with nothing else woken.
    func yield(_ event: MQTTEvent, after delay: Duration) {
        let continuation = self.continuation, writer = store.writerExecutor, deadline = ContinuousClock.now + delay
        // Those that have rung are dropped here, so the list stays as short as what is pending.
        timers.removeAll { $0.deadline <= .now }
        timers.append((writer.schedule(at: deadline) { continuation.yield(event) }, deadline))
    }

    func cancelTimers() {
        for timer in timers { store.writerExecutor.cancel(timer.alarm) }
        timers = []
    }
}
