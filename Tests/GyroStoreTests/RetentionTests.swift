import Foundation
import GyroStore
import TestSupport
import XCTest

final class RetentionTests: XCTestCase {
    /// Writes `count` closed chunks of one session, each with a 64 KiB document.
    func fill(_ store: GyroStore, count: Int, session: String = "u___1") async throws -> [String] {
        var changes = StoreChanges()
        changes.sessions = [SessionRecord(id: session, userId: "u", device: "d", startMs: 0, localDate: "2026-01-01")]
        var ids: [String] = []
        for index in 0..<count {
            var chunk = ChunkRecord(id: "c\(index)", sessionId: session, stream: "gyro", seq: index, odrHz: 50, range: 2000, firstIndex: 0)
            chunk.isOpen = false
            chunk.endMs = Double(index)
            changes.chunks.append(chunk)
            changes.documents.append(DocumentWrite(path: try DocumentPath("realtime_data/c\(index)"), body: Array(repeating: 48, count: 65_536), retain: false, device: "d"))
            ids.append(chunk.id)
        }
        try await store.commit(changes)
        return ids
    }

    func testPublishedChunksArePrunedOldestFirstAndUnpublishedOnesStay() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, maxBytes: 4 << 20, logger: testLogger())
        _ = try await fill(store, count: 100)  // ~6.5 MB, over the 4 MiB limit
        // The broker acknowledged the first 80 chunk documents.
        let pending = try await store.pendingOutbox(after: 0, limit: 80)
        try await store.acknowledge(pending.map(\.seq))
        let report = try await store.enforceRetention { _ in [] }
        XCTAssertGreaterThan(report.prunedChunks, 0)
        XCTAssertEqual(report.evictedUnpublishedChunks, 0)
        XCTAssertLessThanOrEqual(report.usedBytes, 4 << 20)
        let remaining = try await store.documentIds(inCollection: "realtime_data")
        for index in 80..<100 { XCTAssertTrue(remaining.contains("c\(index)"), "unpublished c\(index) must stay") }
        XCTAssertFalse(remaining.contains("c0"), "the oldest published chunk goes first")
        let outbox = try await store.outboxStats()
        XCTAssertEqual(outbox.depth, 20)
    }

    func testWhenOnlyUnpublishedDataIsLeftTheOldestIsEvictedAndCounted() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, maxBytes: 2 << 20, logger: testLogger())
        _ = try await fill(store, count: 60)
        let report = try await store.enforceRetention { _ in [] }
        XCTAssertGreaterThan(report.evictedUnpublishedChunks, 0)
        XCTAssertLessThanOrEqual(report.usedBytes, 2 << 20)
        let evicted = try await store.counter(GyroStore.evictedCounter)
        XCTAssertEqual(evicted, report.evictedUnpublishedChunks)
        let remaining = try await store.documentIds(inCollection: "realtime_data")
        XCTAssertTrue(remaining.contains("c59"), "the newest data is kept")
        XCTAssertFalse(remaining.contains("c0"))
        let session = try await store.session(id: "u___1")
        XCTAssertNotNil(session, "sessions are never pruned")
    }
}
