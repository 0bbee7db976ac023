import HCI
import XCTest

final class ACLCreditsTests: XCTestCase {
    func completed(_ entries: (UInt16, UInt16)...) -> NumberOfCompletedPacketsEvent {
        NumberOfCompletedPacketsEvent(entries: entries.map { .init(connectionHandle: $0.0, numCompletedPackets: $0.1) })
    }

    func testConsumesUntilEmptyThenRefusesWithoutChange() {
        var credits = ACLCredits(totalBuffers: 2)
        XCTAssertTrue(credits.consume(handle: 0x40))
        XCTAssertTrue(credits.consume(handle: 0x41))
        XCTAssertFalse(credits.consume(handle: 0x40))
        XCTAssertEqual(credits.available, 0)
        XCTAssertEqual(credits.inFlight(handle: 0x40), 1)
        XCTAssertEqual(credits.totalInFlight, 2)
    }

    func testNumberOfCompletedPacketsReturnsCreditsPerHandle() {
        var credits = ACLCredits(totalBuffers: 4)
        for _ in 0..<3 { _ = credits.consume(handle: 0x40) }
        _ = credits.consume(handle: 0x41)
        XCTAssertEqual(credits.complete(completed((0x40, 2), (0x41, 1))), [])
        XCTAssertEqual(credits.available, 3)
        XCTAssertEqual(credits.inFlight(handle: 0x40), 1)
        XCTAssertEqual(credits.inFlight(handle: 0x41), 0)
    }

    func testDisconnectReleasesThatConnectionsCredits() {
        var credits = ACLCredits(totalBuffers: 4)
        for _ in 0..<3 { _ = credits.consume(handle: 0x40) }
        _ = credits.consume(handle: 0x41)
        XCTAssertEqual(credits.disconnected(handle: 0x40), 3)
        XCTAssertEqual(credits.available, 3)
        XCTAssertEqual(credits.inFlight(handle: 0x41), 1)
        // A late report for the dead handle must not inflate the credits.
        XCTAssertEqual(credits.complete(completed((0x40, 3))), [.unknownHandle(0x40, completed: 3)])
        XCTAssertEqual(credits.available, 3)
    }

    func testOverReportingIsClampedAndReported() {
        var credits = ACLCredits(totalBuffers: 8)
        _ = credits.consume(handle: 0x40)
        XCTAssertEqual(credits.complete(completed((0x40, 5))), [.moreCompletedThanSent(handle: 0x40, completed: 5, inFlight: 1)])
        XCTAssertEqual(credits.available, 8)
        XCTAssertTrue(ACLCredits.Anomaly.unknownHandle(0x40, completed: 1).description.contains("0x40"))
    }
}
