extension ThreadExecutor {
    /// Names one timer, so that another job can cancel it or fire it early.
    public struct Alarm: Sendable, Hashable {
        let id: UInt64
    }

    public func makeAlarm() -> Alarm {
        Alarm(id: state.withLock { $0.timers.makeAlarm() })
    }

    /// Calls `body` on the thread once `seconds` have passed, or up to `tolerance` later so that
    /// it runs at a wake-up the thread makes anyway, or at once on ``ring(_:)``. An alarm serves
    /// one timer; one rung before it is scheduled runs `body` at once, on the caller.
    ///
    /// `body` runs outside any job, so it must not touch actor state: it resumes or signals
    /// whoever waits (a continuation, an `AsyncStream`), or enters an actor of this executor
    /// with `assumeIsolated`. A callback and not an `async` sleep: a continuation resumed
    /// here would go through the global executor before it got back to an actor on this thread,
    /// unless its task prefers this executor.
    public func schedule(after seconds: Double, tolerance: Double, alarm: Alarm, _ body: @escaping @Sendable () -> Void) {
        let deadline = monotonicNanoseconds() + UInt64(max(0, min(seconds, 1e6)) * 1e9)
        let latest = deadline + UInt64(max(0, min(tolerance, 1e6)) * 1e9)
        let armed = state.withLock { state in
            state.timers.schedule(alarm.id, LoopTimers.Timer(deadline: deadline, latest: latest, fire: body))
        }
        if !armed {
            body()
        } else if !isCurrent {
            execute {}  // a sleeping thread recomputes its timeout
        }
    }

    /// Runs `action` on the thread once `deadline` has passed (never before it), unless
    /// cancelled first: ``schedule(after:tolerance:alarm:_:)`` with a new alarm and no tolerance.
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Alarm {
        let alarm = makeAlarm()
        let wait = ContinuousClock.now.duration(to: deadline).components
        schedule(after: Double(wait.seconds) + Double(wait.attoseconds) * 1e-18, tolerance: 0, alarm: alarm, action)
        return alarm
    }

    /// Drops `alarm`'s timer without firing it (a request answered before its timeout). No
    /// wake-up: a thread that sleeps until the dropped deadline finds nothing due then.
    public func cancel(_ alarm: Alarm) {
        state.withLock { $0.timers.cancel(alarm.id) }
    }

    /// Fires `alarm`'s timer now, on the caller's thread (or as soon as it is scheduled).
    public func ring(_ alarm: Alarm) {
        let fire = state.withLock { $0.timers.ring(alarm.id) }
        fire?()
    }

    /// Fires the timers that are due; returns when the next one must fire at the latest.
    /// `due` is the thread's buffer for their bodies, reused from turn to turn.
    func fireTimers(now: UInt64, due: inout [@Sendable () -> Void]) -> UInt64? {
        let next = state.withLock { state in
            state.timers.takeDue(now: now, into: &due)
            return state.timers.nextLatest()
        }
        guard !due.isEmpty else { return next }
        for fire in due { fire() }
        due.removeAll(keepingCapacity: true)
        // A timer may have set another one (a watchdog re-arming itself): include it.
        return state.withLock { $0.timers.nextLatest() }
    }
}
