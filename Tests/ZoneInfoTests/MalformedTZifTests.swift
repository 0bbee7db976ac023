import Foundation
import XCTest
import SupportCore
import ZoneInfo

/// Damaged zone files are errors that name the file and the damage, never traps.
final class MalformedTZifTests: XCTestCase {
    let source = "/test/Europe/Berlin"
    lazy var berlin = try! [UInt8](Data(contentsOf: URL(fileURLWithPath: "/usr/share/zoneinfo/Europe/Berlin")))

    func problem(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> String? {
        do {
            _ = try Zone(tzif: bytes, identifier: "Europe/Berlin", source: source)
            XCTFail("parsed", file: file, line: line)
            return nil
        } catch {
            guard case .malformed(let path, let problem) = error else { XCTFail("\(error)", file: file, line: line); return nil }
            XCTAssertEqual(path, source, file: file, line: line)
            XCTAssertTrue("\(error)".hasPrefix(source + " is not a valid TZif zone file: "), file: file, line: line)
            return problem
        }
    }

    /// Big-endian count `index` (0 = isutcnt … 5 = charcnt) of the header at `headerStart`.
    func settingCount(_ bytes: [UInt8], header headerStart: Int = 0, _ index: Int, to value: UInt32) -> [UInt8] {
        var copy = bytes
        for byte in 0..<4 { copy[headerStart + 20 + index * 4 + byte] = UInt8(truncatingIfNeeded: value >> (24 - 8 * byte)) }
        return copy
    }

    /// Where the version 2 header starts: after the version 1 block its counts describe.
    var secondHeader: Int {
        func count(_ index: Int) -> Int { berlin[20 + index * 4 ..< 24 + index * 4].reduce(0) { $0 << 8 | Int($1) } }
        return 44 + count(3) * 5 + count(4) * 6 + count(5) + count(2) * 8 + count(1) + count(0)
    }

    func testTheUndamagedFileParses() throws {
        XCTAssertEqual(try Zone(tzif: berlin, identifier: "Europe/Berlin", source: source).offset(atEpochSeconds: 1_782_864_000), 7200)
    }

    func testEveryTruncationIsAnError() {
        // Every prefix: inside the headers, the tables, the footer.
        for length in 0..<berlin.count {
            XCTAssertNotNil(problem(Array(berlin[..<length])), "first \(length) bytes")
        }
    }

    func testWrongMagic() throws {
        XCTAssertEqual(problem(Array("TZig".utf8) + berlin.dropFirst(4)), "it does not start with \"TZif\" (not a compiled zone file)")
        XCTAssertTrue(problem(Array("# tzdb timezone descriptions\n".utf8))?.contains("TZif") == true)
        var second = berlin
        second[secondHeader] = UInt8(ascii: "X")
        XCTAssertTrue(problem(second)?.contains("version 2+ header") == true)
        var version = berlin
        version[4] = UInt8(ascii: "1")
        XCTAssertTrue(problem(version)?.contains("version byte") == true)
    }

    func testCountsBeyondTheData() {
        for index in 2...5 {
            XCTAssertNotNil(problem(settingCount(berlin, header: secondHeader, index, to: 0xFFFF_FFFF)), "count \(index)")
            XCTAssertNotNil(problem(settingCount(berlin, index, to: 0xFFFF_FFFF)), "version 1 count \(index)")
        }
        let huge = problem(settingCount(berlin, header: secondHeader, 3, to: 1_000_000))
        XCTAssertTrue(huge?.contains("only") == true, huge ?? "")
        XCTAssertTrue(problem(settingCount(berlin, header: secondHeader, 4, to: 0))?.contains("typecnt is 0") == true)
        XCTAssertTrue(problem(settingCount(berlin, header: secondHeader, 0, to: 1))?.contains("isutcnt") == true)
    }

    func testTablesThatContradictThemselves() {
        let header = secondHeader
        func count(_ index: Int) -> Int { berlin[header + 20 + index * 4 ..< header + 24 + index * 4].reduce(0) { $0 << 8 | Int($1) } }
        let times = header + 44, typeIndices = times + count(3) * 8, types = typeIndices + count(3)
        var badType = berlin
        badType[typeIndices] = UInt8(count(4))
        XCTAssertTrue(problem(badType)?.contains("uses local time type") == true)
        var unsorted = berlin
        unsorted.replaceSubrange(times + 8 ..< times + 16, with: berlin[times ..< times + 8])
        XCTAssertTrue(problem(unsorted)?.contains("is not after") == true)
        var badOffset = berlin
        badOffset.replaceSubrange(types ..< types + 4, with: [0x7F, 0xFF, 0xFF, 0xFF])
        XCTAssertTrue(problem(badOffset)?.contains("UTC offset") == true)
        var badFlag = berlin
        badFlag[types + 4] = 2
        XCTAssertTrue(problem(badFlag)?.contains("daylight flag") == true)
        var badDesignation = berlin
        badDesignation[types + 5] = 0xFF
        XCTAssertTrue(problem(badDesignation)?.contains("designation") == true)
    }

    func testBadFooters() {
        let footerStart = berlin.dropLast().lastIndex(of: UInt8(ascii: "\n"))!
        XCTAssertTrue(problem(Array(berlin[..<footerStart]) + Array("\nCET-1CEST\n".utf8))?.contains("footer") == true)
        XCTAssertTrue(problem(Array(berlin[..<footerStart]) + Array("\nCET-1CEST,M3.5.0,M10.5.0/3".utf8))?.contains("closing newline") == true)
        XCTAssertTrue(problem(Array(berlin[..<footerStart]) + Array("X".utf8))?.contains("newline") == true)
        XCTAssertTrue(problem(Array(berlin[..<footerStart]) + [0x0A, 0x01, 0x0A])?.contains("printable") == true)
    }

    func testLoadingNamesTheFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("zoneinfo-bad-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory + "/Bad", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try Data(berlin.prefix(100)).write(to: URL(fileURLWithPath: directory + "/Bad/Zone"))
        XCTAssertThrowsError(try Zone.named("Bad/Zone", directory: directory)) { error in
            guard case .malformed(let path, _) = error as? ZoneInfoError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, directory + "/Bad/Zone")
        }
    }

    /// Random damage: a zone that answers within RFC 8536's offsets, the same again from the same
    /// bytes, or a `malformed` error that names the file; never a trap. The seed is printed
    /// (GYROGATE_TEST_SEED replays it) and quoted in every failure.
    func testRandomDamageNeverTraps() {
        var generator = SplitMix64.fresh("testRandomDamageNeverTraps")
        let seed = generator.seed
        var parsed = 0, refused = 0
        for round in 0..<2000 {
            var bytes = berlin
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            let context = "seed \(seed), round \(round)"
            do {
                let zone = try Zone(tzif: bytes, identifier: "x", source: "x")
                parsed += 1
                XCTAssertEqual(try? Zone(tzif: bytes, identifier: "x", source: "x"), zone, "the same bytes, the same zone; \(context)")
                for instant in stride(from: -3_000_000_000, to: 5_000_000_000, by: 97_000_001) {
                    let offset = zone.offset(atEpochSeconds: instant)
                    XCTAssertTrue((-89_999...93_599).contains(offset), "offset \(offset) at \(instant); \(context)")
                }
            } catch {
                refused += 1
                guard case .malformed(let path, let problem) = error else {
                    XCTFail("not a malformed-file error: \(error); \(context)")
                    continue
                }
                XCTAssertEqual(path, "x", context)
                XCTAssertFalse(problem.isEmpty, context)
                XCTAssertTrue(error.description.hasPrefix("x is not a valid TZif zone file: "), "\(error); \(context)")
            }
        }
        XCTAssertEqual(parsed + refused, 2000)
        XCTAssertGreaterThan(parsed, 0, "some damage leaves a zone (bytes the reader skips); seed \(seed)")
        XCTAssertGreaterThan(refused, 0, "some damage is refused; seed \(seed)")
    }
}
