import PosixThreads
import XCTest

/// The read pacing's holds: values that end once, by `release()` or when dropped, and nest.
final class ReadPacingHoldTests: XCTestCase {
    private func pacedLoop() throws -> ThreadExecutor {
        let loop = try ThreadExecutor(name: "pacing-test")
        loop.setReadInterval(seconds: 0.5)
        return loop
    }

    func testAnAllowanceReleasedOrDroppedRestoresPromptReads() throws {
        let loop = try pacedLoop()
        XCTAssertEqual(loop.readInterval, 0, "without an allowance, reads are prompt")
        let allowance = loop.allowPacedReads()
        XCTAssertEqual(loop.readInterval, 0.5)
        allowance.release()
        XCTAssertEqual(loop.readInterval, 0, "released")
        do {
            let dropped = loop.allowPacedReads()
            XCTAssertEqual(loop.readInterval, 0.5)
            _ = dropped
        }
        XCTAssertEqual(loop.readInterval, 0, "dropped at the end of its scope")
    }

    func testAPromptHoldReleasedOrDroppedRestoresTheInterval() throws {
        let loop = try pacedLoop()
        let allowance = loop.allowPacedReads()
        let hold = loop.holdPromptReads()
        XCTAssertEqual(loop.readInterval, 0, "a hold overrides the allowance")
        hold.release()
        XCTAssertEqual(loop.readInterval, 0.5, "released")

        var owned: ThreadExecutor.PromptReadHold? = loop.holdPromptReads()
        XCTAssertEqual(loop.readInterval, 0)
        owned = nil
        XCTAssertEqual(loop.readInterval, 0.5, "dropped by its owner")

        func request() throws {
            let held = loop.holdPromptReads()
            XCTAssertEqual(loop.readInterval, 0)
            _ = held
            throw CancellationError()
        }
        XCTAssertThrowsError(try request())
        XCTAssertEqual(loop.readInterval, 0.5, "dropped on a throw out of its scope")
        allowance.release()
        _ = owned
    }

    func testHoldsNest() throws {
        let loop = try pacedLoop()
        let first = loop.allowPacedReads()
        let second = loop.allowPacedReads()
        first.release()
        XCTAssertEqual(loop.readInterval, 0.5, "one allowance is enough")

        let outer = loop.holdPromptReads()
        let inner = loop.holdPromptReads()
        outer.release()
        XCTAssertEqual(loop.readInterval, 0, "the inner hold still holds")
        inner.release()
        XCTAssertEqual(loop.readInterval, 0.5, "the last hold's end restores the interval")
        second.release()
        XCTAssertEqual(loop.readInterval, 0)
    }
}
