@testable import BLEHost
import Synchronization
import XCTest
import PosixThreads
import SupportCore

/// The data plane's timers: a timer fires on the loop's thread at its deadline, or at once when
/// its alarm is rung, even when the alarm rings before the timer is scheduled.
final class DataPlaneTimerTests: XCTestCase {
    private let loop = ThreadExecutor.dataPlane

    /// Schedules a timer and waits for it; returns the seconds it took and whether it ran on the loop.
    private func fire(after seconds: Double, alarm: ThreadExecutor.Alarm, ring: Bool = false) async throws -> (Double, Bool) {
        let start = ContinuousClock.now
        let (fired, firing) = AsyncStream.makeStream(of: Bool.self)
        loop.schedule(after: seconds, tolerance: 0, alarm: alarm) { [loop] in
            firing.yield(loop.isCurrent)
            firing.finish()
        }
        if ring {
            // Once the timer is set: a job on the loop after the one that set it rings the alarm.
            loop.execute { [loop] in loop.ring(alarm) }
        }
        var onLoop = false
        for await value in fired { onLoop = value }
        let took = ContinuousClock.now - start
        return (Double(took.components.seconds) + Double(took.components.attoseconds) * 1e-18, onLoop)
    }

    func testATimerFiresAtItsDeadlineOnTheLoopsThread() async throws {
        let (took, onLoop) = try await fire(after: 0.05, alarm: loop.makeAlarm())
        XCTAssertGreaterThanOrEqual(took, 0.05)
        XCTAssertLessThan(took, 2, "an idle loop still wakes for its timer")
        XCTAssertTrue(onLoop, "the timer runs on the data plane's thread")
    }

    func testRingingFiresATimerEarly() async throws {
        let (took, _) = try await fire(after: 60, alarm: loop.makeAlarm(), ring: true)
        XCTAssertLessThan(took, 10)
    }

    func testAnAlarmRungBeforeItsTimerFiresItAtOnce() async throws {
        let alarm = loop.makeAlarm()
        loop.ring(alarm)
        let ran = Mutex(false)
        loop.schedule(after: 60, tolerance: 0, alarm: alarm) { ran.withLock { $0 = true } }
        XCTAssertTrue(ran.withLock { $0 }, "scheduled after its ring, the timer runs at once")
    }

    func testARungTimerDoesNotFireAgain() async throws {
        let alarm = loop.makeAlarm()
        let count = Mutex(0)
        loop.schedule(after: 0.02, tolerance: 0, alarm: alarm) { count.withLock { $0 += 1 } }
        loop.ring(alarm)
        let (_, _) = try await fire(after: 0.1, alarm: loop.makeAlarm())  // past the first deadline
        XCTAssertEqual(count.withLock { $0 }, 1)
    }

    func testACancelledTimerDoesNotFire() async throws {
        let alarm = loop.makeAlarm()
        let count = Mutex(0)
        loop.schedule(after: 0.02, tolerance: 0, alarm: alarm) { count.withLock { $0 += 1 } }
        loop.cancel(alarm)
        let (_, _) = try await fire(after: 0.1, alarm: loop.makeAlarm())  // past the cancelled deadline
        loop.ring(alarm)
        XCTAssertEqual(count.withLock { $0 }, 0, "neither its deadline nor a late ring fires a cancelled timer")
    }

    /// The loop keeps the earliest deadline rather than scanning its timers every turn: removing
    /// the earliest (cancelled, rung) must not lose the ones after it, nor fire the removed one.
    func testTimersAfterARemovedEarliestOneStillFire() async {
        let loop = try! ThreadExecutor(name: "test-loop")
        let fired = Mutex<[String]>([])
        let (done, finishing) = AsyncStream.makeStream(of: Void.self)
        let record: @Sendable (String) -> Void = { name in
            // Three timers may fire: the test ends at the third, whichever it is.
            if fired.withLock({ $0.append(name); return $0.count }) == 3 { finishing.finish() }
        }
        let cancelled = loop.makeAlarm(), rung = loop.makeAlarm()
        loop.schedule(after: 0.01, tolerance: 0, alarm: cancelled) { record("cancelled") }
        loop.schedule(after: 0.02, tolerance: 0, alarm: rung) { record("rung") }
        loop.schedule(after: 0.05, tolerance: 0, alarm: loop.makeAlarm()) { record("third") }
        loop.schedule(after: 0.08, tolerance: 0, alarm: loop.makeAlarm()) { record("last") }
        loop.cancel(cancelled)
        loop.ring(rung)
        for await _ in done {}
        XCTAssertEqual(Set(fired.withLock { $0 }), ["rung", "third", "last"])
    }

    func testATimerSetByATimerFiresOnAnIdleLoop() async {
        let (fired, firing) = AsyncStream.makeStream(of: Void.self)
        let loop = self.loop
        loop.schedule(after: 0.02, tolerance: 0, alarm: loop.makeAlarm()) {
            loop.schedule(after: 0.05, tolerance: 0, alarm: loop.makeAlarm()) {
                firing.yield()
                firing.finish()
            }
        }
        let done = Latch()
        Task { for await _ in fired {}; done.open() }
        let firedInTime = await done.wait(timeout: 5)
        XCTAssertTrue(firedInTime, "the loop's sleep includes the second timer")
    }
}

/// `ThreadExecutor.sleep(for:)`: ends at its deadline, or at once with `CancellationError`.
final class DataPlaneSleepTests: XCTestCase {
    func testASleepEndsAtItsDeadline() async throws {
        let start = ContinuousClock.now
        try await ThreadExecutor.dataPlane.sleep(for: 0.05)
        XCTAssertGreaterThanOrEqual(ContinuousClock.now - start, .milliseconds(50))
    }

    func testACancelledSleepThrowsAtOnce() async {
        let start = ContinuousClock.now
        let loop = ThreadExecutor.dataPlane
        let started = Latch()
        let sleeper = Task { () -> Bool in
            do {
                // On the loop's thread: the latch opens in the same job that sets the timer.
                try await withTaskExecutorPreference(loop) {
                    started.open()
                    try await loop.sleep(for: 60)
                }
                return false
            } catch {
                return true
            }
        }
        // The sleep has set its timer once a job the loop runs after that one has run.
        _ = await started.wait(timeout: 30)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in loop.execute { continuation.resume() } }
        sleeper.cancel()
        let threw = await sleeper.value
        XCTAssertTrue(threw)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(10))
    }
}
