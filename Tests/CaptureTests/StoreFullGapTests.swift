import Capture
import Foundation
import GyroStore
import TestSupport
import XCTest

/// When retention must evict unpublished chunks, the session's record says where those samples
/// went: a `storeFull` gap, in the stored session and in the `records` document queued for the broker.
final class StoreFullGapTests: XCTestCase {
    let sensor = SensorIdentity(device: "C4:BE:84:00:00:01", userId: "user-1")
    let t0 = 1_795_000_000_000.0
    let chunkSize = 500
    /// Indices the sensor never delivered (a `notReceived` gap inside the second chunk).
    let lostOnAir: Range<Int64> = 700..<710

    func timestamp(_ index: Int64) -> Double { t0 + Double(index) * 20 }

    func feed(_ engine: CaptureEngine, _ range: Range<Int64>, batch: Int64 = 50) async throws {
        var index = range.lowerBound
        while index < range.upperBound {
            let end = min(index + batch, range.upperBound)
            // y and z vary at random: the store keeps points compact, and such values compact least.
            let samples = (index..<end).map { i -> StoredSample in
                let noise = UInt64(i) &* 0x9E37_79B9_7F4A_7C15
                return StoredSample(timestampMs: timestamp(i), x: Float(i), y: Float(noise >> 44) / 512 - 1024, z: Float((noise >> 24) & 0xFFFFF) / 512)
            }
            try await engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: index, samples: samples)
            index = end
        }
    }

    func document(_ store: GyroStore, _ path: String) async throws -> [String: Any] {
        try jsonObject(try await store.document(try DocumentPath(path)))
    }

    func testEvictedUnpublishedChunksAreStoreFullGapsOfTheRecord() async throws {
        let folder = try TemporaryDirectory()
        // ~7 KB per 500-point chunk as stored: 30 chunks need about twice this budget.
        let store = try GyroStore.open(directory: folder.path, maxBytes: 160 << 10, logger: testLogger())
        let engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: chunkSize, commitInterval: .seconds(60)),
                                   calendar: PeriodCalendar(timeZone: .utc), logger: testLogger())
        let session = try await engine.startSession(sensor: sensor, atMs: t0)
        try await feed(engine, 0..<lostOnAir.lowerBound)
        try await feed(engine, lostOnAir.upperBound..<15_010)  // 30 full chunks, nothing published
        let fed = Int64(15_010 - lostOnAir.count)
        let beforeRetention = try await store.session(id: session.id)
        let allChunks = try XCTUnwrap(beforeRetention).chunkIds
        XCTAssertEqual(allChunks.count, 30)

        let report = try await engine.enforceRetention()

        let evicted = report.evictedUnpublishedChunks
        XCTAssertGreaterThan(evicted, 2, "the budget forces evictions past the chunk with the notReceived gap")
        XCTAssertLessThan(evicted, 30)
        XCTAssertEqual(report.evictions.map(\.chunkId), Array(allChunks.prefix(evicted)), "oldest first")
        let counted = try await store.counter(GyroStore.evictedCounter)
        XCTAssertEqual(counted, evicted)
        let lastEvicted = Int64(evicted * chunkSize + lostOnAir.count - 1)
        let evictedSamples = Int64(evicted * chunkSize)
        let expectedGaps = [
            GapRange(stream: "gyro", fromIndex: 0, toIndex: lostOnAir.lowerBound - 1, fromMs: t0,
                     toMs: timestamp(lostOnAir.lowerBound - 1), missing: lostOnAir.lowerBound, reason: .storeFull),
            GapRange(stream: "gyro", fromIndex: lostOnAir.lowerBound, toIndex: lostOnAir.upperBound - 1, fromMs: timestamp(lostOnAir.lowerBound),
                     toMs: timestamp(lostOnAir.upperBound - 1), missing: Int64(lostOnAir.count), reason: .notReceived),
            GapRange(stream: "gyro", fromIndex: lostOnAir.upperBound, toIndex: lastEvicted, fromMs: timestamp(lostOnAir.upperBound),
                     toMs: timestamp(lastEvicted), missing: lastEvicted - lostOnAir.upperBound + 1, reason: .storeFull),
        ]

        // What the retention transaction itself wrote, read back from the file by a second connection.
        let disk = try GyroStore.open(directory: folder.path, maxBytes: 160 << 10, logger: testLogger())
        let storedSession = try await disk.session(id: session.id)
        let stored = try XCTUnwrap(storedSession)
        XCTAssertEqual(stored.gaps, expectedGaps)
        XCTAssertEqual(stored.samples, fed - evictedSamples)
        XCTAssertEqual(stored.expected, 15_010)
        XCTAssertEqual(stored.chunkIds, Array(allChunks.dropFirst(evicted)))

        let record = try await document(disk, "records/\(session.id)")
        XCTAssertEqual(record["samples"] as? Int, Int(fed - evictedSamples))
        XCTAssertEqual(record["expected"] as? Int, 15_010)
        XCTAssertEqual(record["gscope_data"] as? [String], Array(allChunks.dropFirst(evicted)))
        let gaps = try XCTUnwrap(record["gaps"] as? [[String: Any]])
        XCTAssertEqual(gaps.count, 3)
        for (gap, expected) in zip(gaps, expectedGaps) {
            XCTAssertEqual(gap["stream"] as? String, expected.stream)
            XCTAssertEqual(gap["from_index"] as? Int, Int(expected.fromIndex))
            XCTAssertEqual(gap["to_index"] as? Int, Int(expected.toIndex))
            XCTAssertEqual(gap["missing"] as? Int, Int(expected.missing))
            XCTAssertEqual(gap["reason"] as? String, expected.reason.rawValue)
            XCTAssertEqual(try XCTUnwrap(gap["from"] as? Double), expected.fromMs, accuracy: 0.001)
            XCTAssertEqual(try XCTUnwrap(gap["to"] as? Double), expected.toMs, accuracy: 0.001)
        }
        let daily = try await document(disk, "TitanUpUsers/user-1/DailySessions/\(session.id)")
        XCTAssertEqual(daily["missing"] as? Int, Int(15_010 - fed + evictedSamples))
        XCTAssertEqual(daily["chunks"] as? Int, 30 - evicted)
        // The broker gets the new record: the newest outbox row of its topic carries this body.
        let outbox = try await disk.pendingOutbox(after: 0, limit: 10_000)
        let queued = try XCTUnwrap(outbox.last { $0.topic == "records/\(session.id)" })
        XCTAssertTrue(queued.retain)
        let recordBody = try await disk.document(try DocumentPath("records/\(session.id)"))
        XCTAssertEqual(queued.payload, recordBody)
        XCTAssertFalse(outbox.contains { report.evictions.map { "realtime_data/\($0.chunkId)" }.contains($0.topic) })

        // Capture goes on: later commits keep the gaps, and every sample not evicted is still there.
        try await feed(engine, 15_010..<15_710)
        let closed = try await engine.stopSession(device: sensor.device)
        XCTAssertEqual(Array(closed.gaps.prefix(3)), expectedGaps)
        XCTAssertEqual(closed.gaps.count, 3)
        XCTAssertEqual(closed.samples, fed + 700 - evictedSamples)
        XCTAssertEqual(closed.expected, 15_710)
        let final = try await document(store, "records/\(session.id)")
        XCTAssertEqual((final["gaps"] as? [[String: Any]])?.compactMap { $0["reason"] as? String }, ["storeFull", "notReceived", "storeFull"])
        XCTAssertEqual(final["samples"] as? Int, Int(closed.samples))
        var kept: [Int64] = []
        for id in try XCTUnwrap(final["gscope_data"] as? [String]) {
            let chunk = try await document(store, "realtime_data/\(id)")
            kept += try XCTUnwrap(chunk["data"] as? [[String: Any]]).map { Int64(try XCTUnwrap($0["gx"] as? Double)) }
        }
        XCTAssertEqual(kept, Array((lastEvicted + 1)..<15_710), "every sample after the evicted range, once, in order")
        let counters = await engine.counters
        XCTAssertEqual(counters.missingSamples, Int64(lostOnAir.count) + evictedSamples)
    }
}
