import Foundation
import GyroStore
import TestSupport
import XCTest

/// Chunks evicted unpublished from a full store become `storeFull` gaps of their session, in
/// the transaction that evicts them.
final class EvictionGapTests: XCTestCase {
    let period = 20.0  // 50 Hz

    /// A closed session of `count` chunks of 1,000 indices each with 64 KiB documents; chunk 1
    /// lost indices 1500...1509 on the air (a `notReceived` gap inside it).
    func fillClosedSession(_ store: GyroStore, count: Int) async throws -> SessionRecord {
        var session = SessionRecord(id: "u___1", userId: "u", device: "d", startMs: 0, localDate: "2026-01-01")
        let lost = GapRange(stream: "gyro", fromIndex: 1500, toIndex: 1509, fromMs: 1500 * period, toMs: 1509 * period, missing: 10, reason: .notReceived)
        var changes = StoreChanges()
        for index in 0..<count {
            let first = Int64(index * 1000)
            var chunk = ChunkRecord(id: "c\(index)", sessionId: session.id, stream: "gyro", seq: index, odrHz: 50, range: 2000, firstIndex: first)
            chunk.count = index == 1 ? 990 : 1000
            chunk.startMs = Double(first) * period
            chunk.endMs = Double(first + 999) * period
            chunk.gaps = index == 1 ? [lost] : []
            chunk.isOpen = false
            changes.chunks.append(chunk)
            changes.documents.append(DocumentWrite(path: try DocumentPath("realtime_data/c\(index)"), body: Array(repeating: 48, count: 65_536), retain: false, device: "d"))
            session.chunkIds.append(chunk.id)
            session.samples += Int64(chunk.count)
        }
        session.gaps = [lost]
        session.expected = session.samples + 10
        session.isOpen = false
        session.endMs = Double(count * 1000 - 1) * period
        session.lastSampleMs = session.endMs
        changes.sessions = [session]
        try await store.commit(changes)
        return session
    }

    /// Stands in for capture's renderer: the record document is the session's gaps and samples.
    static func sessionDocuments(_ session: SessionRecord) -> [DocumentWrite] {
        guard let path = try? DocumentPath("records/\(session.id)"),
              let gaps = try? JSONEncoder().encode(session.gaps) else { return [] }
        let body = #"{"samples":\#(session.samples),"gaps":"# + String(decoding: gaps, as: UTF8.self) + "}"
        return [DocumentWrite(path: path, body: Array(body.utf8), retain: true, device: session.device)]
    }

    func testEvictedChunksBecomeStoreFullGapsOfTheirClosedSession() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, maxBytes: 2 << 20, logger: testLogger())
        let before = try await fillClosedSession(store, count: 60)
        let report = try await store.enforceRetention(sessionDocuments: Self.sessionDocuments)

        let evicted = report.evictedUnpublishedChunks
        XCTAssertGreaterThan(evicted, 2, "chunk 1 and the ones after it are evicted")
        XCTAssertLessThan(evicted, 60)
        XCTAssertEqual(report.evictions.map(\.chunkId), (0..<evicted).map { "c\($0)" }, "oldest first")
        let evictedSamples = Int64(evicted * 1000 - 10)
        XCTAssertEqual(report.evictions.reduce(0) { $0 + $1.samples }, evictedSamples)

        // Read back from a second connection to the file: what is on disk.
        let reopened = try GyroStore.open(directory: folder.path, maxBytes: 2 << 20, logger: testLogger())
        let stored = try await reopened.session(id: "u___1")
        let session = try XCTUnwrap(stored)
        let lastEvicted = Int64(evicted * 1000 - 1)
        XCTAssertEqual(session.gaps, [
            GapRange(stream: "gyro", fromIndex: 0, toIndex: 1499, fromMs: 0, toMs: 1499 * period, missing: 1500, reason: .storeFull),
            before.gaps[0],
            GapRange(stream: "gyro", fromIndex: 1510, toIndex: lastEvicted, fromMs: 1510 * period, toMs: Double(lastEvicted) * period,
                     missing: lastEvicted - 1509, reason: .storeFull),
        ], "runs around the gap that was already there; consecutive chunks merge")
        XCTAssertEqual(session.samples, before.samples - evictedSamples)
        XCTAssertEqual(session.expected, before.expected, "evicted samples were expected: they are missing now")
        XCTAssertEqual(session.expected - session.samples, session.gaps.reduce(0) { $0 + $1.missing })
        XCTAssertEqual(session.chunkIds, (evicted..<60).map { "c\($0)" }, "evicted chunks leave gscope_data")
        XCTAssertEqual(session.endMs, before.endMs)

        let record = try jsonObject(try await reopened.document(try DocumentPath("records/u___1")))
        XCTAssertEqual(record["samples"] as? Int, Int(session.samples))
        XCTAssertEqual((record["gaps"] as? [[String: Any]])?.compactMap { $0["reason"] as? String }, ["storeFull", "notReceived", "storeFull"])
        let queued = try await reopened.pendingOutbox(after: 0, limit: 1000).last { $0.topic == "records/u___1" }
        XCTAssertEqual(queued?.retain, true)
        let recordBody = try await reopened.document(try DocumentPath("records/u___1"))
        XCTAssertEqual(queued?.payload, recordBody, "the new record is queued for the broker")

        let remaining = try await reopened.documentIds(inCollection: "realtime_data")
        XCTAssertEqual(remaining, (evicted..<60).map { "c\($0)" }.sorted(), "nothing but the evicted chunks went")
    }

    func testAChunkWithoutSamplesLeavesNoGap() {
        var chunk = ChunkRecord(id: "c", sessionId: "s", stream: "gyro", seq: 0, odrHz: 50, range: 2000, firstIndex: 7)
        chunk.isOpen = false
        let eviction = ChunkEviction(chunk: chunk)
        XCTAssertEqual(eviction.samples, 0)
        XCTAssertEqual(eviction.gaps, [])
    }

    func testGapsAroundAnEvictedRunMergeIntoOne() {
        var session = SessionRecord(id: "s", userId: "u", device: "d", startMs: 0, localDate: "2026-01-01")
        func run(_ from: Int64, _ to: Int64) -> GapRange {
            GapRange(stream: "gyro", fromIndex: from, toIndex: to, fromMs: Double(from) * period, toMs: Double(to) * period,
                     missing: to - from + 1, reason: .storeFull)
        }
        session.gaps = [run(0, 99), run(200, 299)]
        var chunk = ChunkRecord(id: "c", sessionId: "s", stream: "gyro", seq: 1, odrHz: 50, range: 2000, firstIndex: 100)
        chunk.count = 100
        chunk.startMs = 100 * period
        chunk.endMs = 199 * period
        session.samples = 100
        session.recordEviction(ChunkEviction(chunk: chunk))
        XCTAssertEqual(session.gaps, [run(0, 299)])
        XCTAssertEqual(session.samples, 0)
    }
}
