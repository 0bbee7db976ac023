import PosixThreads

extension BLEHost {
    /// Calls `body` on the host once `delay` has passed, from a timer of the data plane's loop;
    /// returns the alarm that cancels it.
    ///
    /// Why not a task that sleeps: the sleep's dispatch timer wakes libdispatch's manager and a
    /// pool thread when it ends (even after the task was cancelled), and the task then hops back
    /// to this loop. The loop's timer fires on the thread that owns the host, at a wake-up the
    /// loop makes anyway when `delay / 16` allows.
    @discardableResult
    func after(_ delay: Duration, _ body: @escaping @Sendable (isolated BLEHost) -> Void) -> ThreadExecutor.Alarm {
        let loop = transport.loop
        let alarm = loop.makeAlarm()
        loop.schedule(after: delay.seconds, tolerance: delay.seconds / 16, alarm: alarm) { [weak self] in
            self?.assumeIsolated { body($0) }
        }
        return alarm
    }

    func cancelTimer(_ alarm: ThreadExecutor.Alarm) {
        transport.loop.cancel(alarm)
    }
}
