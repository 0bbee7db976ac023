import XCTest
import ZoneInfo

/// The first instant of a local day, where midnight is ordinary, skipped or repeated (values
/// from Python's zoneinfo: the first second whose local date is that day).
final class FirstInstantTests: XCTestCase {
    func testFirstInstants() throws {
        let expected: [(String, CivilDate, Int)] = [
            ("Europe/Berlin", day(2026, 3, 29), 1_774_738_800), ("Europe/Berlin", day(2026, 3, 30), 1_774_821_600),
            ("Europe/Berlin", day(2026, 10, 25), 1_792_879_200), ("Europe/Berlin", day(2026, 10, 26), 1_792_969_200),
            ("America/New_York", day(2026, 3, 8), 1_772_946_000), ("America/New_York", day(2026, 3, 9), 1_773_028_800),
            ("America/New_York", day(2026, 11, 1), 1_793_505_600), ("America/New_York", day(2026, 11, 2), 1_793_595_600),
            // Midnight skipped: the day starts at 01:00, the instant of the change.
            ("Asia/Beirut", day(2026, 3, 29), 1_774_735_200), ("Asia/Beirut", day(2026, 3, 30), 1_774_818_000),
            ("America/Santiago", day(2026, 9, 6), 1_788_667_200), ("America/Santiago", day(2026, 9, 7), 1_788_750_000),
            ("America/Havana", day(2026, 3, 8), 1_772_946_000),
            // Clocks back at midnight: 23:00 again, then the new day's only midnight.
            ("Asia/Beirut", day(2026, 10, 25), 1_792_879_200), ("America/Santiago", day(2026, 4, 5), 1_775_361_600),
            ("America/Santiago", day(2026, 9, 5), 1_788_580_800),
        ]
        for (name, date, instant) in expected {
            let zone = try Zone.named(name)
            XCTAssertEqual(zone.firstInstant(of: date), instant, "\(name) \(date)")
            XCTAssertEqual(zone.localDate(atEpochSeconds: instant), date, "\(name) \(date)")
            XCTAssertEqual(zone.localDate(atEpochSeconds: instant - 1), date.adding(days: -1), "\(name) \(date)")
        }
    }

    /// Samoa skipped 2011-12-30 entirely: that day "starts" where 2011-12-31 does.
    func testADayTheClocksSkip() throws {
        let apia = try Zone.named("Pacific/Apia")
        XCTAssertEqual(apia.firstInstant(of: day(2011, 12, 30)), 1_325_239_200)
        XCTAssertEqual(apia.firstInstant(of: day(2011, 12, 31)), 1_325_239_200)
        XCTAssertEqual(apia.localDate(atEpochSeconds: 1_325_239_199), day(2011, 12, 29))
    }

    /// Every day of 2000-2040 in zones with odd offsets and changes: the day before the first
    /// instant is the previous day, and days are 23 to 25 hours long (Lord Howe: 23.5 to 24.5).
    func testConsecutiveDays() throws {
        for name in ["Europe/Berlin", "Australia/Lord_Howe", "America/Santiago", "Asia/Beirut", "Pacific/Chatham", "America/St_Johns", "UTC"] {
            let zone = try Zone.named(name)
            var start = zone.firstInstant(of: day(2000, 1, 1))
            for offset in 1...14_610 {
                let date = day(2000, 1, 1).adding(days: offset)
                let next = zone.firstInstant(of: date)
                XCTAssertEqual(zone.localDate(atEpochSeconds: next), date, "\(name) \(date)")
                XCTAssertEqual(zone.localDate(atEpochSeconds: next - 1), date.adding(days: -1), "\(name) \(date)")
                XCTAssertTrue((82_800...90_000).contains(next - start), "\(name) \(date.adding(days: -1)) lasts \(next - start) s")
                start = next
            }
        }
    }

    func day(_ year: Int, _ month: Int, _ day: Int) -> CivilDate { CivilDate(year: year, month: month, day: day)! }
}
