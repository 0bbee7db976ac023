import Capture
import Foundation
import GyroStore
import TestSupport
import XCTest
import ZoneInfo

/// today / week / month are local calendar periods: checked across midnight, DST changes and
/// month ends in two zones.
final class PeriodCalendarTests: XCTestCase {
    func epochMs(_ text: String, _ zone: String) -> Double {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: zone)
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        return formatter.date(from: text)!.timeIntervalSince1970 * 1000
    }

    func date(_ text: String, _ zone: String) -> Date { Date(timeIntervalSince1970: epochMs(text, zone) / 1000) }

    func testDaysAcrossDSTChangesAreCalendarDays() throws {
        let london = PeriodCalendar(timeZone: try Zone.named("Europe/London"))
        // 2026-03-29: clocks go forward at 01:00, the day is 23 hours long.
        let spring = london.interval(of: .today, containing: date("2026-03-29 12:00", "Europe/London"))
        XCTAssertEqual(spring.endMs - spring.startMs, 23 * 3_600_000)
        XCTAssertEqual(spring.startMs, epochMs("2026-03-29 00:00", "Europe/London"))
        // 2026-10-25: clocks go back, 25 hours.
        let autumn = london.interval(of: .today, containing: date("2026-10-25 23:30", "Europe/London"))
        XCTAssertEqual(autumn.endMs - autumn.startMs, 25 * 3_600_000)

        let sydney = PeriodCalendar(timeZone: try Zone.named("Australia/Sydney"))
        // 2026-10-04: Sydney goes forward at 02:00.
        let sydneySpring = sydney.interval(of: .today, containing: date("2026-10-04 09:00", "Australia/Sydney"))
        XCTAssertEqual(sydneySpring.endMs - sydneySpring.startMs, 23 * 3_600_000)
    }

    func testWeeksStartOnTheConfiguredDay() throws {
        let monday = PeriodCalendar(timeZone: try Zone.named("America/New_York"), firstWeekday: 2)
        let week = monday.interval(of: .week, containing: date("2026-11-01 10:00", "America/New_York"))  // a Sunday, DST ends that day
        XCTAssertEqual(week.startMs, epochMs("2026-10-26 00:00", "America/New_York"))
        XCTAssertEqual(week.endMs, epochMs("2026-11-02 00:00", "America/New_York"))
        XCTAssertEqual(week.endMs - week.startMs, (7 * 24 + 1) * 3_600_000, "the week holds the extra DST hour")
        let sunday = PeriodCalendar(timeZone: try Zone.named("America/New_York"), firstWeekday: 1)
        XCTAssertEqual(sunday.interval(of: .week, containing: date("2026-11-01 10:00", "America/New_York")).startMs,
                       epochMs("2026-11-01 00:00", "America/New_York"))
    }

    func testMonthsEndWhereTheyEnd() throws {
        let sydney = PeriodCalendar(timeZone: try Zone.named("Australia/Sydney"))
        let february = sydney.interval(of: .month, containing: date("2028-02-29 23:59", "Australia/Sydney"))
        XCTAssertEqual(february.startMs, epochMs("2028-02-01 00:00", "Australia/Sydney"))
        XCTAssertEqual(february.endMs, epochMs("2028-03-01 00:00", "Australia/Sydney"))
    }

    /// 23- and 25-hour days in Berlin and New York, with the instants hard-coded (from Python's
    /// zoneinfo) rather than from another calendar.
    func testDSTDaysInBerlinAndNewYork() throws {
        let days: [(String, startSeconds: Double, hours: Double)] = [
            ("Europe/Berlin", 1_774_738_800, 23), ("Europe/Berlin", 1_792_879_200, 25),
            ("America/New_York", 1_772_946_000, 23), ("America/New_York", 1_793_505_600, 25),
        ]
        for (zone, startSeconds, hours) in days {
            let calendar = PeriodCalendar(timeZone: try Zone.named(zone))
            for hour in [0.0, 1, 2, 3, hours - 1] {
                let day = calendar.interval(of: .today, containing: Date(timeIntervalSince1970: startSeconds + hour * 3600 + 1))
                XCTAssertEqual(day.startMs, startSeconds * 1000, "\(zone) hour \(hour)")
                XCTAssertEqual(day.endMs - day.startMs, hours * 3_600_000, zone)
            }
            XCTAssertEqual(calendar.startMs(localDate: calendar.localDate(epochMs: startSeconds * 1000)), startSeconds * 1000, zone)
            XCTAssertNotEqual(calendar.localDate(epochMs: startSeconds * 1000 - 1), calendar.localDate(epochMs: startSeconds * 1000), zone)
        }
    }

    /// Where the clocks skip midnight the day starts at 01:00, the first instant it has.
    func testDaysWhoseMidnightIsSkipped() throws {
        let beirut = PeriodCalendar(timeZone: try Zone.named("Asia/Beirut"))
        let day = beirut.interval(of: .today, containing: Date(timeIntervalSince1970: 1_774_735_200 + 5 * 3600))
        XCTAssertEqual(day.startMs, 1_774_735_200_000)
        XCTAssertEqual(day.endMs - day.startMs, 23 * 3_600_000)
        XCTAssertEqual(beirut.localDate(epochMs: day.startMs), "2026-03-29")
        XCTAssertEqual(beirut.localDate(epochMs: day.startMs - 1), "2026-03-28")
        // Santiago's change is on a Sunday: a week starting on Sunday starts at its 01:00.
        let santiago = PeriodCalendar(timeZone: try Zone.named("America/Santiago"), firstWeekday: 1)
        let week = santiago.interval(of: .week, containing: Date(timeIntervalSince1970: 1_788_667_200 + 86_400))
        XCTAssertEqual(week.startMs, 1_788_667_200_000)
        XCTAssertEqual(week.endMs - week.startMs, (7 * 24 - 1) * 3_600_000)
        XCTAssertEqual(santiago.weekKey(epochMs: 1_788_667_200_000 + 3 * 86_400_000), "2026-09-06")
    }

    /// Sessions straddling midnight, a DST change and a month end, counted in two zones.
    func testSessionReportsInTwoZones() async throws {
        for zone in ["Europe/London", "Australia/Sydney"] {
            let store = try GyroStore.inMemory(logger: testLogger())
            let calendar = PeriodCalendar(timeZone: try Zone.named(zone))
            let engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: 100), calendar: calendar, logger: testLogger())
            let sensor = SensorIdentity(device: "C4:BE:84:00:00:01", userId: "u")
            // (start, end) local times; "now" is 2026-10-31 12:00 local.
            let sessions = [
                ("2026-10-30 23:50", "2026-10-31 00:20"),  // straddles midnight into today: belongs to yesterday
                ("2026-10-31 08:00", "2026-10-31 08:30"),  // today
                ("2026-10-26 07:00", "2026-10-26 07:10"),  // Monday of this week
                ("2026-10-25 23:00", "2026-10-26 01:00"),  // Sunday night: last week (London's DST change that night)
                ("2026-10-01 00:05", "2026-10-01 00:15"),  // first minutes of this month
                ("2026-09-30 23:55", "2026-10-01 00:05"),  // straddles the month end: last month
            ]
            for (start, end) in sessions {
                _ = try await engine.startSession(sensor: sensor, atMs: epochMs(start, zone))
                _ = try await engine.stopSession(device: sensor.device, atMs: epochMs(end, zone))
            }
            let now = date("2026-10-31 12:00", zone)
            let today = try await SessionReport.load(from: store, period: .today, calendar: calendar, now: now)
            let week = try await SessionReport.load(from: store, period: .week, calendar: calendar, now: now)
            let month = try await SessionReport.load(from: store, period: .month, calendar: calendar, now: now)
            let all = try await SessionReport.load(from: store, period: .all, calendar: calendar, now: now)
            XCTAssertEqual(today.count, 1, zone)
            XCTAssertEqual(today.durationMs, 30 * 60_000, zone)
            XCTAssertEqual(week.count, 3, zone)
            XCTAssertEqual(month.count, 5, zone)
            XCTAssertEqual(all.count, 6, zone)
            XCTAssertEqual(all.sessions.first?.localDate, "2026-09-30", zone)
        }
    }
}
