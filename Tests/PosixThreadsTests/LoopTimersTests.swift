@testable import PosixThreads
import Synchronization
import XCTest

/// The loop's alarm list, without a loop: which timers are due, what the loop sleeps until, and
/// how a ring, a cancel and a ring before the schedule end an alarm.
final class LoopTimersTests: XCTestCase {
    /// The deadlines of the timers whose bodies ran.
    private final class Fired: Sendable {
        let deadlines = Mutex<[UInt64]>([])
        func withLock<T>(_ body: (inout [UInt64]) -> T) -> T { deadlines.withLock { body(&$0) } }
    }

    private func timer(_ deadline: UInt64, latest: UInt64? = nil, _ fired: Fired) -> LoopTimers.Timer {
        LoopTimers.Timer(deadline: deadline, latest: latest ?? deadline) { fired.withLock { $0.append(deadline) } }
    }

    func testDueTimersAreTakenOnceAndTheNextBoundFollows() {
        var timers = LoopTimers()
        let fired = Fired()
        for deadline: UInt64 in [30, 10, 20] {
            XCTAssertTrue(timers.schedule(timers.makeAlarm(), timer(deadline, latest: deadline + 5, fired)))
        }
        XCTAssertEqual(timers.nextLatest(), 15)
        var due: [@Sendable () -> Void] = []
        timers.takeDue(now: 9, into: &due)
        XCTAssertTrue(due.isEmpty, "nothing is due before the earliest deadline")
        timers.takeDue(now: 20, into: &due)
        due.forEach { $0() }
        XCTAssertEqual(fired.withLock { $0.sorted() }, [10, 20])
        XCTAssertEqual(timers.nextLatest(), 35)
        due.removeAll()
        timers.takeDue(now: 20, into: &due)
        XCTAssertTrue(due.isEmpty, "a timer that was taken is over")
    }

    func testCancellingOrRingingTheEarliestMovesTheBound() {
        var timers = LoopTimers()
        let fired = Fired()
        let first = timers.makeAlarm(), second = timers.makeAlarm(), third = timers.makeAlarm()
        XCTAssertTrue(timers.schedule(first, timer(10, fired)))
        XCTAssertTrue(timers.schedule(second, timer(20, fired)))
        XCTAssertTrue(timers.schedule(third, timer(30, fired)))
        timers.cancel(first)
        XCTAssertEqual(timers.nextLatest(), 20)
        timers.ring(second)?()
        XCTAssertEqual(fired.withLock { $0 }, [20], "a ring hands out the timer's body")
        XCTAssertEqual(timers.nextLatest(), 30)
        XCTAssertNil(timers.ring(second), "a rung alarm is over")
        timers.cancel(third)
        XCTAssertNil(timers.nextLatest())
    }

    func testAnAlarmRungBeforeItsScheduleEndsAtTheSchedule() {
        var timers = LoopTimers()
        let fired = Fired()
        let alarm = timers.makeAlarm()
        XCTAssertNil(timers.ring(alarm))
        XCTAssertFalse(timers.schedule(alarm, timer(10, fired)), "the caller runs the body at once")
        XCTAssertNil(timers.nextLatest())
        XCTAssertFalse(timers.schedule(alarm, timer(10, fired)), "the alarm is over")
    }

    func testReschedulingReplacesTheTimer() {
        var timers = LoopTimers()
        let fired = Fired()
        let alarm = timers.makeAlarm()
        XCTAssertTrue(timers.schedule(alarm, timer(10, fired)))
        XCTAssertTrue(timers.schedule(alarm, timer(40, fired)))
        XCTAssertEqual(timers.nextLatest(), 40, "the replaced deadline no longer counts")
        var due: [@Sendable () -> Void] = []
        timers.takeDue(now: 40, into: &due)
        due.forEach { $0() }
        XCTAssertEqual(fired.withLock { $0 }, [40])
    }
}
