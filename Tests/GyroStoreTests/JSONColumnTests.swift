import JSON
import XCTest
@testable import GyroStore

/// The hazards and gaps columns: what the store writes reads back the same, and what stores
/// written with Foundation's JSONEncoder hold still reads.
final class JSONColumnTests: XCTestCase {
    func testGapsRoundTripWithFractionalTimes() throws {
        let gaps = [
            GapRange(stream: "gyro", fromIndex: 12, toIndex: 40, fromMs: 1_795_731_671_000.5, toMs: 1_795_731_671_290.25,
                     missing: 29, reason: .disconnected("link lost")),
            GapRange(stream: "accel", fromIndex: 0, toIndex: 0, fromMs: 0.1, toMs: 0.1, missing: 1, reason: .storeFull),
        ]
        XCTAssertEqual(try JSONColumn.gaps(JSONColumn.text(gaps)), gaps)
        XCTAssertEqual(JSONColumn.text([GapRange]()), "[]")
        XCTAssertEqual(try JSONColumn.gaps("[]"), [])
    }

    func testHazardsRoundTrip() throws {
        let hazards = ["fall": 2, "impact \"hard\"": 1]
        XCTAssertEqual(try JSONColumn.hazards(JSONColumn.text(hazards)), hazards)
        XCTAssertEqual(JSONColumn.text([String: Int]()), "{}")
    }

    func testReadsWhatJSONEncoderWrote() throws {
        // Foundation's JSONEncoder output for the same values (unsorted keys, escaped slashes).
        let gaps = #"[{"toMs":1795731671290.25,"stream":"gyro","missing":29,"reason":"disconnected (link\/lost)","fromIndex":12,"toIndex":40,"fromMs":1795731671000.5}]"#
        XCTAssertEqual(try JSONColumn.gaps(gaps), [GapRange(stream: "gyro", fromIndex: 12, toIndex: 40, fromMs: 1_795_731_671_000.5,
                                                            toMs: 1_795_731_671_290.25, missing: 29, reason: .disconnected("link/lost"))])
        XCTAssertEqual(try JSONColumn.hazards(#"{"fall":2}"#), ["fall": 2])
    }

    func testMalformedColumnsNameTheColumn() {
        XCTAssertThrowsError(try JSONColumn.gaps("[{\"stream\":\"gyro\"}]")) { error in
            XCTAssertTrue("\(error)".contains("gaps column"), "\(error)")
        }
        XCTAssertThrowsError(try JSONColumn.hazards("{\"fall\":1.5}")) { error in
            XCTAssertTrue("\(error)".contains("hazards column"), "\(error)")
        }
        XCTAssertThrowsError(try JSONColumn.gaps("[1,")) { error in
            XCTAssertTrue("\(error)".contains("gaps column is not valid JSON"), "\(error)")
        }
    }
}
