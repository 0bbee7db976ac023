import XCTest
@testable import Export
import GyroStore

/// The numbers as the exports write them, from the store's integers (times in microseconds,
/// axes in 1e-5 units), and the local time column.
final class NumberTextTests: XCTestCase {
    private func text(_ build: (inout [UInt8]) -> Void) -> String {
        var bytes: [UInt8] = []
        build(&bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    func testFixedDecimalsRoundHalfAwayFromZero() {
        XCTAssertEqual(text { $0.append(fixed: -12345, scale: 5, places: 3) }, "-0.123")
        XCTAssertEqual(text { $0.append(fixed: 12350, scale: 5, places: 3) }, "0.124")
        XCTAssertEqual(text { $0.append(fixed: -12350, scale: 5, places: 3) }, "-0.124")
        XCTAssertEqual(text { $0.append(fixed: -49, scale: 5, places: 3) }, "0.000", "no minus on a value that rounds to zero")
        XCTAssertEqual(text { $0.append(fixed: 1_718_625_600_000_125, scale: 3, places: 3) }, "1718625600000.125")
        XCTAssertEqual(text { $0.append(fixed: 20_000, scale: 6, places: 3) }, "0.020")
        XCTAssertEqual(text { $0.append(fixed: 6_097_561, scale: 5, places: 5) }, "60.97561")
    }

    func testTrimmedAsTheDocumentsWriteNumbers() {
        XCTAssertEqual(text { $0.append(trimmed: 48_780, scale: 5) }, "0.4878")
        XCTAssertEqual(text { $0.append(trimmed: 200_000, scale: 5) }, "2")
        XCTAssertEqual(text { $0.append(trimmed: -100, scale: 5) }, "-0.001")
        XCTAssertEqual(text { $0.append(trimmed: 0, scale: 5) }, "0")
        XCTAssertEqual(text { $0.append(trimmed: 1_718_625_600_000_000, scale: 3) }, "1718625600000")
    }

    func testIntegers() {
        XCTAssertEqual(text { $0.append(integer: 0) }, "0")
        XCTAssertEqual(text { $0.append(integer: -1_718_625_600_000_125) }, "-1718625600000125")
        XCTAssertEqual(text { $0.append(integer: Int64.max) }, "9223372036854775807")
    }

    func testOffsetHeaderText() {
        XCTAssertEqual(LocalTime.offsetText(-8 * 3600), "-08:00")
        XCTAssertEqual(LocalTime.offsetText(3600), "+01:00")
        XCTAssertEqual(LocalTime.offsetText(0), "+00:00")
        XCTAssertEqual(LocalTime.offsetText(19_800), "+05:30")
        XCTAssertEqual(LocalTime.offsetText(-12_600), "-03:30")
    }

    func testLocalTimeAtTheFilesOffset() {
        // 2024-06-17T12:00:00.125Z
        let micros: Int64 = 1_718_625_600_125_000
        var time = LocalTime(offsetSeconds: 3600)
        XCTAssertEqual(text { time.append(micros: micros, to: &$0) }, "2024-06-17T13:00:00.125")
        var west = LocalTime(offsetSeconds: -8 * 3600)
        XCTAssertEqual(text { west.append(micros: micros, to: &$0) }, "2024-06-17T04:00:00.125")
        XCTAssertEqual(text { west.append(micros: micros + 86_400_000_000, to: &$0) }, "2024-06-18T04:00:00.125", "the next day's prefix")
        var utc = LocalTime(offsetSeconds: 0)
        XCTAssertEqual(text { utc.append(micros: -1_000, to: &$0) }, "1969-12-31T23:59:59.999", "before 1970, in its own day")
        XCTAssertEqual(LocalTime(offsetSeconds: 3600).fileStamp(micros: micros), "2024-06-17T13.00.00.125")
    }
}
