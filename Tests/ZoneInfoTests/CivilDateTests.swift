import Foundation
import XCTest
import ZoneInfo

/// Days since the epoch, weekdays and the text forms (values from Python's datetime).
final class CivilDateTests: XCTestCase {
    func testKnownDays() {
        let known: [(String, Int, Int)] = [("1970-01-01", 0, 5), ("2000-02-29", 11_016, 3), ("1600-03-01", -135_080, 4), ("0001-01-01", -719_162, 2),
                                           ("9999-12-31", 2_932_896, 6), ("2026-11-26", 20_783, 5), ("1969-12-31", -1, 4), ("1900-03-01", -25_508, 5)]
        for (text, days, weekday) in known {
            let date = CivilDate(daysSinceEpoch: days)
            XCTAssertEqual(date.description, text)
            XCTAssertEqual(CivilDate(text)?.daysSinceEpoch, days, text)
            XCTAssertEqual(date.weekday, weekday, text)
        }
    }

    func testRoundTripsAndStepsOneDayAtATime() {
        var previous = CivilDate(daysSinceEpoch: -800_001)
        for days in -800_000...800_000 {
            let date = CivilDate(daysSinceEpoch: days)
            XCTAssertEqual(date.daysSinceEpoch, days)
            XCTAssertLessThan(previous, date)
            if date.day == 1 {
                XCTAssertEqual(previous.day, CivilDate.daysIn(month: previous.month, year: previous.year), "\(previous) is not a month's last day")
            } else {
                XCTAssertEqual(date.day, previous.day + 1)
            }
            previous = date
        }
    }

    func testInvalidDates() {
        XCTAssertNil(CivilDate(year: 2026, month: 2, day: 29))
        XCTAssertNotNil(CivilDate(year: 2028, month: 2, day: 29))
        XCTAssertNil(CivilDate(year: 1900, month: 2, day: 29))
        XCTAssertNil(CivilDate(year: 2026, month: 13, day: 1))
        for text in ["", "2026-02-30", "2026-1-1x", "2026/01/01", "2026-01", "2026-01-01-01", "+2026-01-01", "２０２６-01-01"] {
            XCTAssertNil(CivilDate(text), text)
        }
    }

    func testMonthSteps() {
        let date = CivilDate(year: 2026, month: 12, day: 31)!
        XCTAssertEqual(date.firstOfMonth.description, "2026-12-01")
        XCTAssertEqual(date.firstOfNextMonth.description, "2027-01-01")
        XCTAssertEqual(date.adding(days: 60).description, "2027-03-01")
    }

    func testISO8601() {
        XCTAssertEqual(iso8601UTC(epochSeconds: 1_795_721_278), "2026-11-26T19:27:58Z")
        XCTAssertEqual(iso8601UTC(epochSeconds: 0), "1970-01-01T00:00:00Z")
        XCTAssertEqual(iso8601UTC(epochSeconds: -1), "1969-12-31T23:59:59Z")
        XCTAssertEqual(iso8601UTC(epochSeconds: 951_868_799), "2000-02-29T23:59:59Z")
        XCTAssertEqual(Date(timeIntervalSince1970: 1_795_721_278.999).iso8601UTC, "2026-11-26T19:27:58Z")
        XCTAssertEqual(Date(timeIntervalSince1970: -0.5).iso8601UTC, "1969-12-31T23:59:59Z")
        XCTAssertEqual(Date(timeIntervalSince1970: 1_795_721_278).iso8601UTC, ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: 1_795_721_278)))
    }

    func testZeroPadding() {
        XCTAssertEqual(zeroPadded(7, width: 2), "07")
        XCTAssertEqual(zeroPadded(123, width: 2), "123")
        XCTAssertEqual(zeroPadded(0, width: 4), "0000")
        XCTAssertEqual(zeroPadded(-5, width: 3), "-005")
        XCTAssertEqual(zeroPadded(Int.min, width: 1), "-9223372036854775808")
    }
}
