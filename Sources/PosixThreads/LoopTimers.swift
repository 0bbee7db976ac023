/// A ``ThreadExecutor``'s alarms and their timers, as one short list (used under the executor's lock).
///
/// Why a list and not dictionaries: the data plane holds a few alarms at a time (a silence check per
/// sensor, the requests in flight), and each silence check re-arms about once a second, at a
/// wake-up after a paced sleep, when little of the thread's code is still in the cache. A pass
/// over a few contiguous entries is a short path; hashing into a dictionary and two sets is a
/// long one. The earliest bounds are kept, so a turn with nothing due reads one number.
struct LoopTimers {
    struct Timer {
        var deadline: UInt64
        /// The latest the timer may fire: the loop sleeps no longer than this.
        var latest: UInt64
        var fire: @Sendable () -> Void
    }

    /// An alarm handed out and not yet over, with its timer once scheduled.
    private struct Entry {
        var id: UInt64
        var timer: Timer?
        /// Rung before its timer was scheduled: the timer runs as it is scheduled.
        var rung = false
    }

    private var entries: [Entry] = []
    private var nextID: UInt64 = 0
    /// The earliest deadline and the earliest `latest` among the timers (`.max`: none). Lowered
    /// by every schedule; a removal marks them stale, and the next read recomputes them.
    private var earliestDeadline: UInt64 = .max
    private var earliestLatest: UInt64 = .max
    private var stale = false

    mutating func makeAlarm() -> UInt64 {
        nextID += 1
        entries.append(Entry(id: nextID))
        return nextID
    }

    /// Sets the alarm's timer (replacing one it had). False when the alarm is over, or was rung
    /// first (which ends it): the caller runs the timer's body at once.
    mutating func schedule(_ id: UInt64, _ timer: Timer) -> Bool {
        guard let index = index(of: id) else { return false }
        if entries[index].rung {
            remove(at: index)
            return false
        }
        if entries[index].timer != nil { stale = true }
        entries[index].timer = timer
        earliestDeadline = min(earliestDeadline, timer.deadline)
        earliestLatest = min(earliestLatest, timer.latest)
        return true
    }

    /// Ends the alarm without firing its timer.
    mutating func cancel(_ id: UInt64) {
        if let index = index(of: id) { remove(at: index) }
    }

    /// Ends the alarm and returns its timer's body to run; an alarm without a timer yet is
    /// marked rung instead.
    mutating func ring(_ id: UInt64) -> (@Sendable () -> Void)? {
        guard let index = index(of: id) else { return nil }
        if let timer = entries[index].timer {
            remove(at: index)
            return timer.fire
        }
        entries[index].rung = true
        return nil
    }

    /// Ends the alarms whose timers are due at `now` and appends their bodies to `due`.
    mutating func takeDue(now: UInt64, into due: inout [@Sendable () -> Void]) {
        if stale { recomputeBounds() }
        guard earliestDeadline <= now else { return }
        var index = entries.count
        while index > 0 {
            index -= 1
            if let timer = entries[index].timer, timer.deadline <= now {
                due.append(timer.fire)
                remove(at: index)
            }
        }
        recomputeBounds()
    }

    /// When the next timer must fire at the latest (nil: none is set).
    mutating func nextLatest() -> UInt64? {
        if stale { recomputeBounds() }
        return earliestLatest == .max ? nil : earliestLatest
    }

    private func index(of id: UInt64) -> Int? {
        entries.firstIndex { $0.id == id }
    }

    /// Removes an entry by moving the last one into its place: the list has no order.
    private mutating func remove(at index: Int) {
        if entries[index].timer != nil { stale = true }
        entries.swapAt(index, entries.count - 1)
        entries.removeLast()
    }

    private mutating func recomputeBounds() {
        (earliestDeadline, earliestLatest) = (.max, .max)
        for entry in entries {
            guard let timer = entry.timer else { continue }
            earliestDeadline = min(earliestDeadline, timer.deadline)
            earliestLatest = min(earliestLatest, timer.latest)
        }
        stale = false
    }
}
