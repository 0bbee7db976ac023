import HostTime
import PosixThreads
import XCTest

/// `GatewayClock` over a kernel the test drives: the timeline stays continuous through a step,
/// `now()` follows it, and each re-dating comes out of `redatings` in order.
final class GatewayClockTests: XCTestCase {
    final class FakeKernel: Sendable {
        struct State { var wall = 1_000.0; var monotonic = 50.0; var synchronised = false }
        let state = LockedState(State())
        var kernel: GatewayClock.Kernel {
            GatewayClock.Kernel(wall: { self.state.withLock { $0.wall } }, monotonic: { self.state.withLock { $0.monotonic } },
                                synchronised: { (self.state.withLock { $0.synchronised }, 0.5) })
        }
        func advance(_ seconds: Double) { state.withLock { $0.wall += seconds; $0.monotonic += seconds } }
        func step(_ seconds: Double, synchronised: Bool) { state.withLock { $0.wall += seconds; $0.synchronised = synchronised } }
    }

    func testAStepMovesNowButNotTheTimelineAndIsYieldedOnce() async {
        let fake = FakeKernel()
        let clock = GatewayClock(kernel: fake.kernel)
        XCTAssertEqual(clock.timeline(), 1_000)
        XCTAssertEqual(clock.dating, .unsynchronised)
        fake.advance(2)
        fake.step(259_200, synchronised: true)
        clock.observe()
        XCTAssertEqual(clock.timeline(), 1_002, "the timeline never jumps")
        XCTAssertEqual(clock.now(), 1_002 + 259_200)
        let snapshot = clock.snapshot
        XCTAssertEqual(snapshot.dating, .synchronised)
        XCTAssertEqual(snapshot.steps, 1)
        XCTAssertEqual(snapshot.redatings, 1)
        XCTAssertEqual(snapshot.maxError, 0.5)
        clock.stopWatching()
        var yielded: [Redating] = []
        for await redating in clock.redatings { yielded.append(redating) }
        XCTAssertEqual(yielded, [Redating(delta: 259_200, dating: .synchronised, reason: "clock synchronised")])
    }

    func testTheSystemClockAnswersAndItsWatcherStarts() {
        let clock = GatewayClock()
        let before = clock.timeline()
        XCTAssertGreaterThan(before, 1_600_000_000, "anchored to the wall clock")
        clock.startWatching()
        XCTAssertFalse(clock.snapshot.stepDetection.isEmpty)
        XCTAssertGreaterThanOrEqual(clock.timeline(), before)
        clock.stopWatching()
    }
}
