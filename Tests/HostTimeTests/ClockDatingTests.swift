import HostTime
import XCTest

/// The rules of `ClockDating`, observation by observation (the kernel's side, steps and the
/// synchronisation flag, is tested in the VM: Tests/VM/hcivm.py, scenarios t, u, v).
final class ClockDatingTests: XCTestCase {
    func testAStepOfTheUnsynchronisedClockToTrueTimeAndItsSynchronisationReDateOnce() {
        var dating = ClockDating(wallOffset: 0, synchronised: false)
        XCTAssertEqual(dating.dating, .unsynchronised)
        // As a test bed (or an NTP client) does it: the clock is set, then declared synchronised.
        XCTAssertNil(dating.observe(wallOffset: 0.004, synchronised: false), "a step under the threshold re-dates nothing")
        let step = dating.observe(wallOffset: 259_200, synchronised: false)
        XCTAssertEqual(step, Redating(delta: 259_200 - 0.004, dating: .unsynchronised, reason: "clock set while not synchronised"))
        let synced = dating.observe(wallOffset: 259_200, synchronised: true)
        XCTAssertEqual(synced?.delta, 0)
        XCTAssertEqual(synced?.dating, .synchronised)
        XCTAssertEqual(dating.correction, 259_200)
        XCTAssertNil(dating.observe(wallOffset: 259_200, synchronised: true), "nothing changed, nothing re-dated")
    }

    func testAStepWhileSynchronisedIsFollowedWhateverItsSign() {
        var dating = ClockDating(wallOffset: 0, synchronised: true)
        XCTAssertEqual(dating.observe(wallOffset: -3600, synchronised: true), Redating(delta: -3600, dating: .synchronised, reason: "clock stepped"))
        XCTAssertEqual(dating.correction, -3600)
        XCTAssertNil(dating.observe(wallOffset: -3600.009, synchronised: true))
        XCTAssertEqual(dating.correction, -3600.009, accuracy: 1e-9, "a small step is followed for what comes next")
    }

    func testAStepThatClearsTheKernelsFlagIsFollowedAndTheNextSynchronisationSaysSo() {
        var dating = ClockDating(wallOffset: 0, synchronised: true)
        // clock_settime clears the kernel's NTP state (STA_UNSYNC) until the client sets it again.
        XCTAssertEqual(dating.observe(wallOffset: -3600, synchronised: false)?.dating, .unsynchronised)
        XCTAssertEqual(dating.observe(wallOffset: -3600, synchronised: true), Redating(delta: 0, dating: .synchronised, reason: "clock synchronised"))
    }

    func testLosingTheFlagWithoutAStepKeepsTheSynchronisedDating() {
        var dating = ClockDating(wallOffset: 0, synchronised: true)
        XCTAssertNil(dating.observe(wallOffset: 0.001, synchronised: false))
        XCTAssertEqual(dating.dating, .synchronised)
        XCTAssertFalse(dating.kernelSynchronised)
    }

    func testABoardDatesAnUnsynchronisedGatewayUntilTheClockIsSynchronised() {
        var dating = ClockDating(wallOffset: 0, synchronised: false)
        let board = dating.board(correction: 259_200.5, source: "C4:BE:84:00:00:01")
        XCTAssertEqual(board?.delta, 259_200.5)
        XCTAssertEqual(board?.dating, .board)
        XCTAssertEqual(dating.boardSource, "C4:BE:84:00:00:01")
        XCTAssertNil(dating.board(correction: 1, source: "C4:BE:84:00:00:02"), "the first board dates the gateway")
        XCTAssertNil(dating.observe(wallOffset: 100, synchronised: false), "an unsynchronised step does not beat the board")
        let synced = dating.observe(wallOffset: 259_200.502, synchronised: true)
        XCTAssertEqual(synced?.delta ?? .nan, 0.002, accuracy: 1e-9, "the board's drift, re-dated")
        XCTAssertEqual(synced?.dating, .synchronised)
        XCTAssertNil(dating.boardSource)
    }

    func testASynchronisedGatewayTakesNoBoardTime() {
        var dating = ClockDating(wallOffset: 0, synchronised: true)
        XCTAssertNil(dating.board(correction: 5, source: "board"))
        XCTAssertEqual(dating.correction, 0)
    }
}
