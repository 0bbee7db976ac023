import Capture
import Foundation
import GyroStore
import TestSupport
import XCTest
import ZoneInfo

final class MedalsTests: XCTestCase {
    let calendar = PeriodCalendar(timeZone: try! Zone.named("Europe/London"))

    func history(_ days: [(String, Double)]) -> [(localDate: String, weekKey: String, durationMs: Double)] {
        days.map { day in
            // Midday of the local day (12 hours after its start, 13:00 on a 23-hour day).
            let ms = calendar.startMs(localDate: day.0)! + 12 * 3_600_000
            return (day.0, calendar.weekKey(epochMs: ms), day.1 * 60_000)
        }
    }

    func testStreakBrokenAndResumed() {
        let broken = Medals.evaluate(history([("2026-03-01", 5), ("2026-03-02", 5), ("2026-03-04", 5), ("2026-03-05", 5)]), calendar: calendar)
        XCTAssertTrue(broken["firstSession"])
        XCTAssertFalse(broken["threeDayStreak"], "two 2-day runs are not a 3-day streak")
        let resumed = Medals.evaluate(history([("2026-03-01", 5), ("2026-03-02", 5), ("2026-03-04", 5), ("2026-03-05", 5), ("2026-03-06", 5)]), calendar: calendar)
        XCTAssertTrue(resumed["threeDayStreak"])
        XCTAssertFalse(resumed["sevenDayStreak"])
    }

    func testStreaksAcrossMonthEndAndDST() {
        // 2026-03-29 is London's 23-hour day; the streak runs through it and over the month end.
        let days = (25...31).map { ("2026-03-\($0)", 1.0) } + [("2026-04-01", 1.0)]
        let medals = Medals.evaluate(history(days), calendar: calendar)
        XCTAssertTrue(medals["sevenDayStreak"])
        let thirty = Medals.evaluate(history((0..<30).map { offset in
            (CivilDate(year: 2026, month: 1, day: 20)!.adding(days: offset).description, 1.0)
        }), calendar: calendar)
        XCTAssertTrue(thirty["thirtyDayStreak"], "Jan 20 to Feb 18")
    }

    func testCountsDurationsWeeksAndMonths() {
        let ten = Medals.evaluate(history((1...10).map { ("2026-05-\(zeroPadded($0 * 2, width: 2))", 12.0) }), calendar: calendar)
        XCTAssertTrue(ten["tenSessions"])
        XCTAssertTrue(ten["tenMinuteSession"])
        XCTAssertFalse(ten["thirtyMinuteSession"])
        XCTAssertFalse(ten["fiveSessionsInAWeek"])
        // Mon 2026-05-04 … Fri 2026-05-08 are one ISO week; Sun 2026-05-03 is the week before.
        let week = Medals.evaluate(history([("2026-05-03", 1), ("2026-05-04", 1), ("2026-05-05", 1), ("2026-05-06", 1), ("2026-05-07", 1)]), calendar: calendar)
        XCTAssertFalse(week["fiveSessionsInAWeek"])
        let fullWeek = Medals.evaluate(history([("2026-05-04", 1), ("2026-05-05", 1), ("2026-05-06", 1), ("2026-05-07", 1), ("2026-05-10", 1)]), calendar: calendar)
        XCTAssertTrue(fullWeek["fiveSessionsInAWeek"])
        let month = Medals.evaluate(history((1...10).map { ("2026-06-\(zeroPadded($0, width: 2))", 60.0) }), calendar: calendar)
        XCTAssertTrue(month["tenHoursInAMonth"])
        XCTAssertTrue(month["hourSession"])
        let split = Medals.evaluate(history((1...5).map { ("2026-06-\(zeroPadded(25 + $0, width: 2))", 60.0) } + (1...5).map { ("2026-07-0\($0)", 60.0) }), calendar: calendar)
        XCTAssertFalse(split["tenHoursInAMonth"], "10 hours over two months is not 10 hours in one month")
    }

    /// Medals once earned stay earned, and the document is rewritten only when it changes.
    func testMedalsAreMonotonicAndWrittenOnlyOnChange() async throws {
        let store = try GyroStore.inMemory(logger: testLogger())
        let engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: 100), calendar: calendar, logger: testLogger())
        let sensor = SensorIdentity(device: "C4:BE:84:00:00:01", userId: "m")
        let start = 1_780_000_000_000.0
        func session(_ day: Int, minutes: Double) async throws -> SessionRecord {
            let at = start + Double(day) * 86_400_000
            _ = try await engine.startSession(sensor: sensor, atMs: at)
            return try await engine.stopSession(device: sensor.device, atMs: at + minutes * 60_000)
        }
        let long = try await session(0, minutes: 31)
        _ = try await session(1, minutes: 1)
        _ = try await session(2, minutes: 1)
        var medals = try jsonObject(try await store.document(try DocumentPaths.medals(userId: "m")))
        XCTAssertEqual(medals["thirtyMinuteSession"] as? Bool, true)
        XCTAssertEqual(medals["threeDayStreak"] as? Bool, true)
        let outboxBefore = try await store.pendingOutbox(after: 0, limit: 1000).filter { $0.topic.hasSuffix("MedalsAndTrophies/current") }.map(\.seq)

        try await engine.deleteSession(id: long.id)
        _ = try await session(10, minutes: 1)  // nothing new earned
        medals = try jsonObject(try await store.document(try DocumentPaths.medals(userId: "m")))
        XCTAssertEqual(medals["thirtyMinuteSession"] as? Bool, true, "deleting the session does not take the medal back")
        let outboxAfter = try await store.pendingOutbox(after: 0, limit: 1000).filter { $0.topic.hasSuffix("MedalsAndTrophies/current") }.map(\.seq)
        XCTAssertEqual(outboxAfter, outboxBefore, "no rewrite when nothing changed")
    }
}
