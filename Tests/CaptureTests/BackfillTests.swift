import Foundation
import GyroStore
import TestSupport
import XCTest
@testable import Capture

/// Which logged samples fill a gap, and how a published chunk document takes them in.
final class BackfillTests: XCTestCase {
    let gap = GapRange(stream: "gyro", fromIndex: 10, toIndex: 14, fromMs: 100, toMs: 140, missing: 5, reason: .disconnected("x"))

    func sample(_ ms: Double, _ x: Float = 0) -> StoredSample { StoredSample(timestampMs: ms, x: x, y: 1, z: 2) }

    func testAsManySamplesAsMissingTakeTheIndicesInOrder() {
        let logged = [sample(90.6), sample(100.8, 10), sample(110.9, 11), sample(121, 12), sample(130.7, 13), sample(140.5, 14), sample(150.2)]
        let fill = GapFill(gap: gap, periodMs: 10, samples: logged)
        XCTAssertEqual(fill.filled.map(\.index), [10, 11, 12, 13, 14])
        XCTAssertEqual(fill.filled.map(\.sample.x), [10, 11, 12, 13, 14], "the samples before and after the gap were streamed")
        XCTAssertEqual(fill.remaining, [])
    }

    func testFewerSamplesLeaveTheRestAsSmallerGaps() {
        // The log lost index 12 (it overwrote it, say): the others take the indices nearest their times.
        let fill = GapFill(gap: gap, periodMs: 10, samples: [sample(100.8), sample(110.9), sample(130.7), sample(140.5)])
        XCTAssertEqual(fill.filled.map(\.index), [10, 11, 13, 14])
        XCTAssertEqual(fill.remaining, [GapRange(stream: "gyro", fromIndex: 12, toIndex: 12, fromMs: 120, toMs: 120, missing: 1, reason: .disconnected("x"))])
        let none = GapFill(gap: gap, periodMs: 10, samples: [sample(40), sample(200)])
        XCTAssertEqual(none.filled.count, 0)
        XCTAssertEqual(none.remaining, [gap])
    }

    func testAGapThatEndsAfterItsLastSampleWasDueStepsByThePeriod() {
        // A board reset at ~145 ms ended the stream: the gap's end is the next stream's first
        // sample (190 ms), not where its last missing sample was due. The log lost the last two.
        let reset = GapRange(stream: "gyro", fromIndex: 10, toIndex: 14, fromMs: 100, toMs: 180, missing: 5, reason: .boardReset)
        let fill = GapFill(gap: reset, periodMs: 10, samples: [sample(100.8), sample(110.9), sample(121)])
        XCTAssertEqual(fill.filled.map(\.index), [10, 11, 12])
        XCTAssertEqual(fill.remaining, [GapRange(stream: "gyro", fromIndex: 13, toIndex: 14, fromMs: 130, toMs: 140, missing: 2, reason: .boardReset)])
    }

    func testOneMoreSampleThanAnEstimatedCountFillsInOrderFromTheStart() {
        // A restart's count estimated one short: 160 indices, 161 logged samples at the period.
        let estimated = GapRange(stream: "gyro", fromIndex: 100, toIndex: 259, fromMs: 1000, toMs: 2600, missing: 160, reason: .gatewayRestarted)
        let logged = (0..<161).map { sample(1000 + Double($0) * 10 + 0.7, Float($0)) }
        let fill = GapFill(gap: estimated, periodMs: 10, samples: logged)
        XCTAssertEqual(fill.filled.map(\.index), Array(100...259))
        XCTAssertEqual(fill.filled.map(\.sample.x), (0..<160).map(Float.init), "each at its own index, none skipped")
        XCTAssertEqual(fill.remaining, [])
    }

    func testASplicedChunkKeepsItsPointsAndMarksTheNewOnes() throws {
        let renderer = DocumentRenderer()
        var chunk = ChunkRecord(id: "c1", sessionId: "s1", stream: "gyro", seq: 0, odrHz: 100, range: 2000, firstIndex: 8)
        chunk.gaps = [gap]
        chunk.count = 3
        chunk.startMs = 80
        chunk.endMs = 150
        chunk.isOpen = false
        let session = SessionRecord(id: "s1", userId: "u", device: "C4:BE:84:00:00:01", startMs: 0, localDate: "2026-11-26")
        let old = renderer.chunk(chunk, session: session, samples: [sample(80, 8.123456), sample(90, 9), sample(150, 15)][...])
        chunk.gaps = []
        chunk.count = 5
        let stored = try XCTUnwrap(renderer.chunk(chunk, session: session, splicing: old, adding: [sample(100, 10), sample(110, 11)]))
        let spliced = try XCTUnwrap(ChunkBody.json(stored))
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(spliced)) as? [String: Any])
        let points = try XCTUnwrap(object["data"] as? [[String: Any]])
        XCTAssertEqual(points.map { $0["timestamp"] as? Double }, [80, 90, 100, 110, 150])
        XCTAssertEqual(points.map { $0["backfilled"] as? Bool }, [nil, nil, true, true, nil])
        XCTAssertEqual((object["gaps"] as? [Any])?.count, 0)
        let text = String(decoding: spliced, as: UTF8.self)
        XCTAssertTrue(text.contains(#"{"timestamp":80.000,"gx":8.12346,"gy":1.00000,"gz":2.00000}"#) || text.contains("\"gx\":8.12346"), text)
        XCTAssertNil(renderer.chunk(chunk, session: session, splicing: Array("{}".utf8), adding: []), "not a chunk document")
    }
}
