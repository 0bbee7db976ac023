@testable import GyroStore
import XCTest
@testable import Capture

/// A chunk's points fit the buffer reserved for them, and chunk ids are time-ordered (version 7) UUIDs.
final class ChunkDocumentSizeTests: XCTestCase {
    /// The longest points a chunk can hold: full-range negative axes with five decimals, a
    /// timestamp with three (the last millisecond of 2099); with and without a location.
    func testThePointsOfAFullRangeChunkFitTheReservedBytes() throws {
        var chunk = ChunkRecord(id: "c1", sessionId: "s1", stream: "gyro", seq: 0, odrHz: 100, range: 2000, firstIndex: 0)
        let session = SessionRecord(id: "s1", userId: "u", device: "C4:BE:84:00:00:01", startMs: 0, localDate: "2026-11-26")
        let samples = (0..<2_000).map { index in
            StoredSample(timestampMs: 4_102_444_799_999.125 - Double(index) * 1.001, x: -1999.9999, y: -1999.8765, z: -1234.5677)
        }
        chunk.startMs = samples.last?.timestampMs
        chunk.endMs = samples.first?.timestampMs
        for location in [nil, (latitude: -89.1234567, longitude: -179.1234567)] as [(latitude: Double, longitude: Double)?] {
            let renderer = DocumentRenderer(location: location)
            let empty = try XCTUnwrap(ChunkBody.json(renderer.chunk(chunk, session: session, samples: [][...]))).count
            let full = try XCTUnwrap(ChunkBody.json(renderer.chunk(chunk, session: session, samples: samples[...]))).count
            let perPoint = PointText(axisKeys: ["gx", "gy", "gz"], suffix: ChunkBody.locationSuffix(location)).reservedBytes
            XCTAssertLessThanOrEqual(full - empty, samples.count * perPoint)
            // Tight: the bound is what such points take, not a guess far above it.
            XCTAssertGreaterThan(full - empty, samples.count * (perPoint - 2))
        }
    }

    func testChunkIdsAreLowercaseTimeOrderedVersion7UUIDs() {
        var seen = Set<String>()
        for _ in 0..<1_000 {
            let id = ChunkId.random()
            XCTAssertEqual(id.count, 36)
            XCTAssertEqual(id.enumerated().filter { $0.element == "-" }.map(\.offset), [8, 13, 18, 23], id)
            XCTAssertTrue(id.allSatisfy { "0123456789abcdef-".contains($0) }, id)
            XCTAssertEqual(Array(id)[14], "7", id)
            XCTAssertTrue("89ab".contains(Array(id)[19]), id)
            seen.insert(id)
        }
        XCTAssertEqual(seen.count, 1_000)
        let before = ChunkId.random()
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        let stamped = UInt64(before.replacingOccurrences(of: "-", with: "").prefix(12), radix: 16) ?? 0
        XCTAssertLessThanOrEqual(now - stamped, 1_000, "the high 48 bits are the clock's milliseconds")
    }

    func testChunkIdsPlaceTheirBitsAsUUIDText() {
        XCTAssertEqual(ChunkId.format(high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210), "01234567-89ab-7def-bedc-ba9876543210")
        XCTAssertEqual(ChunkId.format(high: 0, low: 0), "00000000-0000-7000-8000-000000000000")
        XCTAssertEqual(ChunkId.format(high: .max, low: .max), "ffffffff-ffff-7fff-bfff-ffffffffffff")
    }
}
