import XCTest
import ZoneInfo

/// The footer rules alone, on the instants where they change the offset (hard-coded from
/// Python's zoneinfo for the real zones, by hand for the rest).
final class PosixTZRuleTests: XCTestCase {
    func assertChange(_ rule: PosixTZRule, at instant: Int, from before: Int, to after: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(rule.offset(atEpochSeconds: instant - 1).seconds, before, "just before \(iso8601UTC(epochSeconds: instant))", file: file, line: line)
        XCTAssertEqual(rule.offset(atEpochSeconds: instant).seconds, after, "at \(iso8601UTC(epochSeconds: instant))", file: file, line: line)
    }

    func testNorthernHemisphere() throws {
        let berlin = try PosixTZRule(parsing: "CET-1CEST,M3.5.0,M10.5.0/3")
        XCTAssertEqual(berlin.standardOffset, 3600)
        XCTAssertEqual(berlin.daylight?.offset, 7200)
        assertChange(berlin, at: 1_774_746_000, from: 3600, to: 7200)  // 2026-03-29 01:00 UTC
        assertChange(berlin, at: 1_792_890_000, from: 7200, to: 3600)  // 2026-10-25 01:00 UTC
        let newYork = try PosixTZRule(parsing: "EST5EDT,M3.2.0,M11.1.0")
        assertChange(newYork, at: 1_772_953_200, from: -18_000, to: -14_400)  // 2026-03-08 07:00 UTC
        assertChange(newYork, at: 1_793_512_800, from: -14_400, to: -18_000)  // 2026-11-01 06:00 UTC
    }

    /// Daylight time across the new year: the end comes before the start in each year.
    func testSouthernHemisphere() throws {
        let sydney = try PosixTZRule(parsing: "AEST-10AEDT,M10.1.0,M4.1.0/3")
        assertChange(sydney, at: 1_901_721_600, from: 39_600, to: 36_000)  // 2030-04-07 03:00 AEDT
        assertChange(sydney, at: 1_917_446_400, from: 36_000, to: 39_600)  // 2030-10-06 02:00 AEST
        assertChange(sydney, at: 1_933_171_200, from: 39_600, to: 36_000)
        assertChange(sydney, at: 1_948_896_000, from: 36_000, to: 39_600)
        XCTAssertEqual(sydney.offset(atEpochSeconds: 1_924_992_000).seconds, 39_600)  // 2031-01-01: summer
        // São Paulo's rule of 2008-2017, compared with the zone's history: starts and ends at
        // midnight, which the clocks skip going forward and repeat going back.
        let saoPaulo = try PosixTZRule(parsing: "<-03>3<-02>,M10.3.0/0,M2.3.0/0")
        XCTAssertEqual(saoPaulo.standardOffset, -10_800)
        assertChange(saoPaulo, at: 1_361_066_400, from: -7200, to: -10_800)  // 2013-02-17 00:00 -02
        assertChange(saoPaulo, at: 1_382_238_000, from: -10_800, to: -7200)  // 2013-10-20 00:00 -03
        assertChange(saoPaulo, at: 1_392_516_000, from: -7200, to: -10_800)
        assertChange(saoPaulo, at: 1_413_687_600, from: -10_800, to: -7200)
    }

    /// Santiago: version 3's hour 24 (the change at the end of a Saturday).
    func testHour24() throws {
        let santiago = try PosixTZRule(parsing: "<-04>4<-03>,M9.1.6/24,M4.1.6/24")
        assertChange(santiago, at: 1_901_761_200, from: -10_800, to: -14_400)  // 2030-04-07 00:00 -03
        assertChange(santiago, at: 1_915_070_400, from: -14_400, to: -10_800)  // 2030-09-08 00:00 -04
    }

    /// Dublin: "daylight" time is winter, behind standard time.
    func testNegativeDaylightTime() throws {
        let dublin = try PosixTZRule(parsing: "IST-1GMT0,M10.5.0,M3.5.0/1")
        assertChange(dublin, at: 1_901_149_200, from: 0, to: 3600)  // 2030-03-31 01:00 UTC
        assertChange(dublin, at: 1_919_293_200, from: 3600, to: 0)  // 2030-10-27 01:00 UTC
        XCTAssertTrue(dublin.offset(atEpochSeconds: 1_924_992_000).isDaylight)
    }

    func testJulianDays() throws {
        // Jn never counts February 29: J60 is March 1 in every year.
        let julian = try PosixTZRule(parsing: "<+0330>-3:30<+0430>,J60/0,J300/0")
        XCTAssertEqual(julian.standardOffset, 12_600)
        assertChange(julian, at: 1_709_238_600, from: 12_600, to: 16_200)  // 2024-03-01 00:00 +0330
        assertChange(julian, at: 1_677_616_200, from: 12_600, to: 16_200)  // 2023-03-01 00:00 +0330
        assertChange(julian, at: 1_729_971_000, from: 16_200, to: 12_600)  // 2024-10-27 00:00 +0430
        // Zero-based n counts it: 59 is February 29 in a leap year, March 1 otherwise.
        let zeroBased = try PosixTZRule(parsing: "<+0330>-3:30<+0430>,59/0,299/0")
        assertChange(zeroBased, at: 1_709_152_200, from: 12_600, to: 16_200)  // 2024-02-29 00:00 +0330
        assertChange(zeroBased, at: 1_677_616_200, from: 12_600, to: 16_200)  // 2023-03-01 00:00 +0330
    }

    /// RFC 8536's example of daylight time all year: one year's end is the next one's start.
    func testDaylightTimeAllYear() throws {
        let rule = try PosixTZRule(parsing: "EST5EDT,0/0,J365/25")
        for instant in [1_622_505_600, 1_640_995_199, 1_640_995_200, 1_735_646_400, 1_735_705_800] {
            XCTAssertEqual(rule.offset(atEpochSeconds: instant).seconds, -14_400, iso8601UTC(epochSeconds: instant))
        }
    }

    func testWithoutDaylightTime() throws {
        XCTAssertEqual(try PosixTZRule(parsing: "<-03>3").offset(atEpochSeconds: 1_900_000_000).seconds, -10_800)
        XCTAssertEqual(try PosixTZRule(parsing: "<+0545>-5:45").standardOffset, 20_700)
        XCTAssertEqual(try PosixTZRule(parsing: "UTC0").standardOffset, 0)
        XCTAssertEqual(try PosixTZRule(parsing: "<+1245>-12:45<+1345>,M9.5.0/2:45,M4.1.0/3:45").daylight?.offset, 49_500)
    }

    func testRulesThatDoNotParse() {
        for text in ["", "C1", "CET", "CET-1CEST", "CET-1CEST,M3.5.0", "CET-1CEST,M13.5.0,M10.5.0/3", "CET-1CEST,M3.6.0,M10.5.0",
                     "CET-1CEST,M3.5.7,M10.5.0", "CET-25", "<CET-1", "<AB>-1", "CET-1CEST,J0,J365", "CET-1CEST,366,1",
                     "CET-1CEST,M3.5.0/168,M10.5.0", "CET-1:60", "CET-1CEST,M3.5.0,M10.5.0/3 extra"] {
            XCTAssertThrowsError(try PosixTZRule(parsing: text), text) { error in
                guard case .invalidRule(text, let problem) = error as? ZoneInfoError else { return XCTFail("\(text): \(error)") }
                XCTAssertFalse(problem.isEmpty)
            }
        }
    }
}
