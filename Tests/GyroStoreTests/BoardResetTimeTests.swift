import GyroStore
import TestSupport
import XCTest

/// The reset time of each of a board's power cycles outlives the process that read it.
final class BoardResetTimeTests: XCTestCase {
    func testResetTimesAreKeptPerDeviceAndCycle() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        try await store.saveBoardResetTime(device: "C4:BE:84:00:00:01", resetUID: 2, resetTime: 1_795_000_000.25)
        try await store.saveBoardResetTime(device: "C4:BE:84:00:00:01", resetUID: 3, resetTime: 1_795_000_100.5)
        try await store.saveBoardResetTime(device: "C4:BE:84:00:00:01", resetUID: 2, resetTime: 1_795_000_000.26)
        try await store.saveBoardResetTime(device: "C4:BE:84:00:00:02", resetUID: 2, resetTime: 7)
        let reopened = try GyroStore.open(directory: folder.path, logger: testLogger())
        let times = try await reopened.boardResetTimes(device: "c4:be:84:00:00:01")
        XCTAssertEqual(times, [2: 1_795_000_000.26, 3: 1_795_000_100.5])
    }
}
