import Foundation
import XCTest
import ZoneInfo

/// The parser against the system's own compiled zones: every offset in `ExpectedOffsets.swift`
/// (what Python's zoneinfo said over the same files) must come out the same.
final class SystemZoneFileTests: XCTestCase {
    func testOffsetsMatchAnIndependentReader() throws {
        for (name, samples) in expectedOffsets {
            let zone = try Zone.named(name)
            XCTAssertEqual(zone.identifier, name)
            for (instant, offset) in samples {
                XCTAssertEqual(zone.offset(atEpochSeconds: instant), offset, "\(name) at \(iso8601UTC(epochSeconds: instant))")
            }
        }
    }

    func testDaylightSavingFlag() throws {
        let berlin = try Zone.named("Europe/Berlin")
        XCTAssertTrue(berlin.isDaylightSavingTime(atEpochSeconds: 1_782_864_000))  // 2026-07-01
        XCTAssertFalse(berlin.isDaylightSavingTime(atEpochSeconds: 1_798_761_600))  // 2027-01-01
        // Far after any table: the footer rule decides.
        XCTAssertTrue(berlin.isDaylightSavingTime(atEpochSeconds: 4_118_083_200))  // 2100-07-01
    }

    func testUTCNeedsNoFile() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("no-zoneinfo-\(getpid())").path
        for name in ["UTC", "Etc/UTC", "GMT"] {
            let zone = try Zone.named(name, directory: missing)
            XCTAssertEqual(zone.offset(atEpochSeconds: 1_795_721_278), 0)
            XCTAssertEqual(zone.identifier, name)
        }
        XCTAssertEqual(Zone.utc.offset(atEpochSeconds: -5_000_000_000), 0)
        XCTAssertEqual(Zone(identifier: "+05:30", fixedOffset: 19_800).offset(atEpochSeconds: 0), 19_800)
    }

    func testNamesThatAreNotZones() {
        XCTAssertThrowsError(try Zone.named("Mars/Olympus_Mons")) { error in
            guard case .unknownZone("Mars/Olympus_Mons", let path) = error as? ZoneInfoError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "/usr/share/zoneinfo/Mars/Olympus_Mons")
        }
        for name in ["../../etc/passwd", "Europe/../../etc/passwd", "/etc/localtime", "", "Europe//Berlin", "Europe/Berlin\0", "Europe/Ber lin"] {
            XCTAssertThrowsError(try Zone.named(name), name) { error in
                guard case .invalidName = error as? ZoneInfoError else { return XCTFail("\(name): \(error)") }
            }
        }
        // A folder of zones is not a zone.
        XCTAssertThrowsError(try Zone.named("America/Argentina")) { error in
            guard case .unknownZone = error as? ZoneInfoError else { return XCTFail("\(error)") }
        }
        // No zoneinfo folder at all: say what to install.
        XCTAssertThrowsError(try Zone.named("Europe/Berlin", directory: "/nonexistent/zoneinfo")) { error in
            XCTAssertTrue("\(error)".contains("install the tzdata package"), "\(error)")
        }
    }

    func testADirectoryCanStandInForTheSystemOne() throws {
        let directory = try temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/Test", withIntermediateDirectories: true)
        let berlin = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/Europe/Berlin"))
        try berlin.write(to: URL(fileURLWithPath: directory + "/Test/Zone"))
        let zone = try Zone.named("Test/Zone", directory: directory)
        XCTAssertEqual(zone.offset(atEpochSeconds: 1_782_864_000), 7200)
        XCTAssertThrowsError(try Zone.named("Europe/Berlin", directory: directory))
    }

    func testSystemZoneName() throws {
        XCTAssertEqual(Zone.systemIdentifier(environment: ["TZ": "Europe/Berlin"]), "Europe/Berlin")
        XCTAssertEqual(Zone.systemIdentifier(environment: ["TZ": ":Asia/Tokyo"]), "Asia/Tokyo")
        XCTAssertEqual(Zone.systemIdentifier(environment: ["TZ": "/usr/share/zoneinfo/America/Chicago"]), "America/Chicago")
        // Without a usable TZ, the /etc/localtime link names the zone.
        let directory = try temporaryDirectory()
        let link = directory + "/localtime"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "../usr/share/zoneinfo/Australia/Sydney")
        XCTAssertEqual(Zone.systemIdentifier(environment: ["TZ": "CET-1CEST,M3.5.0,M10.5.0/3"], localtime: link), "Australia/Sydney")
        XCTAssertEqual(Zone.systemIdentifier(environment: [:], localtime: link), "Australia/Sydney")
        // A copied file has no name to give.
        let copy = directory + "/copied"
        try Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/Europe/Berlin")).write(to: URL(fileURLWithPath: copy))
        XCTAssertNil(Zone.systemIdentifier(environment: [:], localtime: copy))
        XCTAssertNil(Zone.systemIdentifier(environment: [:], localtime: directory + "/missing"))
    }

    func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("zoneinfo-tests-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }
}
