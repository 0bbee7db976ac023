@testable import BLEHost
import XCTest

/// The data plane's timers: an actor on the loop sleeps without leaving its thread, and a sleep
/// ends at its deadline, when rung, or when its task is cancelled.
final class DataPlaneTimerTests: XCTestCase {
    private actor OnLoop {
        let loop = DataPlaneLoop.shared
        nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

        /// Sleeps; returns the seconds slept and whether every step ran on the loop's thread.
        func nap(_ seconds: Double, alarm: DataPlaneLoop.Alarm) async -> (slept: Double, onLoop: Bool) {
            let start = ContinuousClock.now
            var onLoop = loop.inLoop
            await loop.sleep(seconds: seconds, tolerance: 0, alarm: alarm)
            onLoop = onLoop && loop.inLoop
            let slept = ContinuousClock.now - start
            return (Double(slept.components.seconds) + Double(slept.components.attoseconds) * 1e-18, onLoop)
        }
    }

    func testASleepEndsAtItsDeadlineOnTheLoopsThread() async {
        let actor = OnLoop()
        let (slept, onLoop) = await actor.nap(0.05, alarm: DataPlaneLoop.shared.makeAlarm())
        XCTAssertGreaterThanOrEqual(slept, 0.05)
        XCTAssertLessThan(slept, 2, "an idle loop still wakes for its timer")
        XCTAssertTrue(onLoop, "the sleeping actor stays on the data plane's thread")
    }

    func testRingingEndsASleepEarly() async throws {
        let actor = OnLoop()
        let alarm = DataPlaneLoop.shared.makeAlarm()
        let nap = Task { await actor.nap(60, alarm: alarm) }
        try await Task.sleep(for: .milliseconds(50))  // usually asleep by now; a ring before the sleep counts too
        DataPlaneLoop.shared.ring(alarm)
        let slept = await nap.value.slept
        XCTAssertLessThan(slept, 10)
    }

    func testCancellingTheTaskEndsASleep() async throws {
        let actor = OnLoop()
        let nap = Task { await actor.nap(60, alarm: DataPlaneLoop.shared.makeAlarm()) }
        try await Task.sleep(for: .milliseconds(50))
        nap.cancel()
        let slept = await nap.value.slept
        XCTAssertLessThan(slept, 10)
    }

    func testAnAlarmRungBeforeItsSleepMakesTheSleepReturnAtOnce() async {
        let loop = DataPlaneLoop.shared
        let alarm = loop.makeAlarm()
        loop.ring(alarm)
        let start = ContinuousClock.now
        await loop.sleep(seconds: 60, tolerance: 0, alarm: alarm)
        XCTAssertLessThan(ContinuousClock.now - start, .seconds(10))
    }
}
