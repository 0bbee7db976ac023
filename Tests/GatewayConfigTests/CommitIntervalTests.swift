import Foundation
import GatewayConfig
import XCTest

/// `capture.backfillCommitIntervalMs`: a longer commit interval only where every sensor's board
/// logs what a crash would lose, and always with the reason.
final class CommitIntervalTests: XCTestCase {
    func parse(capture: String, sensors: String) throws -> GatewayConfiguration {
        try GatewayConfiguration.parse(
            Data(#"{"gatewayId":"g","bluetooth":{"transport":"hci:0"},"mqtt":{"host":"h"},"capture":\#(capture),"sensors":\#(sensors)}"#.utf8),
            baseDirectory: NSTemporaryDirectory(), environment: [:])
    }

    let both = #"[{"address":"C4:BE:84:00:00:01","userId":"u","backfill":true},{"address":"C4:BE:84:00:00:02","userId":"u","backfill":true}]"#
    let one = #"[{"address":"C4:BE:84:00:00:01","userId":"u","backfill":true},{"address":"C4:BE:84:00:00:02","userId":"u"}]"#

    func testEverySensorWithBackfillCommitsAtTheLongerInterval() throws {
        let configuration = try parse(capture: #"{"commitIntervalMs":500,"backfillCommitIntervalMs":10000}"#, sensors: both)
        let interval = configuration.capture.commitInterval(sensors: configuration.sensors)
        XCTAssertEqual(interval.ms, 10_000)
        XCTAssertTrue(interval.reason.hasPrefix("capture.backfillCommitIntervalMs"), interval.reason)
    }

    func testASensorWithoutBackfillKeepsTheShortIntervalAndSaysWhy() throws {
        let configuration = try parse(capture: #"{"commitIntervalMs":500,"backfillCommitIntervalMs":10000}"#, sensors: one)
        let interval = configuration.capture.commitInterval(sensors: configuration.sensors)
        XCTAssertEqual(interval.ms, 500)
        XCTAssertTrue(interval.reason.contains("C4:BE:84:00:00:02 has no backfill"), interval.reason)
    }

    func testWithoutTheKeyNothingChanges() throws {
        let configuration = try parse(capture: #"{"commitIntervalMs":1000}"#, sensors: both)
        XCTAssertNil(configuration.capture.backfillCommitIntervalMs)
        XCTAssertEqual(configuration.capture.commitInterval(sensors: configuration.sensors).ms, 1000)
    }

    func testOutOfRangeIsAClearError() {
        XCTAssertThrowsError(try parse(capture: #"{"backfillCommitIntervalMs":500}"#, sensors: both)) { error in
            XCTAssertTrue("\(error)".contains("capture.backfillCommitIntervalMs"), "\(error)")
        }
        XCTAssertThrowsError(try parse(capture: #"{"backfillCommitIntervalMs":120000}"#, sensors: both))
    }
}
