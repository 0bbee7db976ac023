import XCTest
import ZoneInfo

/// Zone files built here: a version 1 file (no 64-bit block, no footer), and tables no real zone
/// has but a TZif file may (changes minutes apart around midnight, found by fuzzing).
final class SyntheticTZifTests: XCTestCase {
    /// A TZif file of `version` (0 for version 1) with one local time type per offset.
    func tzif(version: UInt8, transitions: [(Int, Int)], offsets: [Int32], footer: String = "") -> [UInt8] {
        func be32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
        func be64(_ value: Int) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }
        func block(timeSize: Int) -> [UInt8] {
            var bytes = Array("TZif".utf8) + [version] + [UInt8](repeating: 0, count: 15)
            bytes += [0, 0, 0, transitions.count, offsets.count, 4].flatMap(be32)
            bytes += transitions.flatMap { timeSize == 8 ? be64($0.0) : be32($0.0) }
            bytes += transitions.map { UInt8($0.1) }
            bytes += offsets.flatMap { be32(Int($0)) + [0, 0] }
            return bytes + Array("ZZZ\0".utf8)
        }
        guard version >= UInt8(ascii: "2") else { return block(timeSize: 4) }
        return block(timeSize: 4) + block(timeSize: 8) + Array("\n\(footer)\n".utf8)
    }

    func testVersion1File() throws {
        // +01:00 until 1996-03-31 01:00 UTC, then +02:00; no footer, so +02:00 ever after.
        let zone = try Zone(tzif: tzif(version: 0, transitions: [(828_234_000, 1)], offsets: [3600, 7200]), identifier: "v1", source: "v1")
        XCTAssertEqual(zone.offset(atEpochSeconds: 828_233_999), 3600)
        XCTAssertEqual(zone.offset(atEpochSeconds: 828_234_000), 7200)
        XCTAssertEqual(zone.offset(atEpochSeconds: 4_000_000_000), 7200)
        XCTAssertEqual(zone.offset(atEpochSeconds: -4_000_000_000), 3600, "before the first transition: type 0")
    }

    func testFooterTakesOverAfterTheTable() throws {
        let bytes = tzif(version: UInt8(ascii: "3"), transitions: [(0, 1)], offsets: [0, 3600], footer: "CET-1CEST,M3.5.0,M10.5.0/3")
        let zone = try Zone(tzif: bytes, identifier: "v3", source: "v3")
        XCTAssertEqual(zone.offset(atEpochSeconds: -1), 0)
        XCTAssertEqual(zone.offset(atEpochSeconds: 1_782_864_000), 7200)  // 2026-07-01: the rule's summer
        XCTAssertEqual(zone.offset(atEpochSeconds: 1_798_761_600), 3600)
    }

    /// Half an hour at +00:00 just before midnight, inside a zone at +00:00:17: 1970-01-01
    /// starts when the second change brings the clock past midnight.
    func testChangesMinutesApartAroundMidnight() throws {
        let bytes = tzif(version: UInt8(ascii: "2"), transitions: [(-1793, 1), (-1, 0)], offsets: [17, 0])
        let zone = try Zone(tzif: bytes, identifier: "odd", source: "odd")
        let day = CivilDate(year: 1970, month: 1, day: 1)!
        XCTAssertEqual(zone.firstInstant(of: day), -1)
        XCTAssertEqual(zone.localDate(atEpochSeconds: -2).description, "1969-12-31")
    }
}
