import Foundation
import GyroStore
import TestSupport
import XCTest

/// A retention pass runs in transactions of a bounded number of chunks, and ends where the
/// same pass in one transaction (as before batches) ends.
final class RetentionBatchTests: XCTestCase {
    /// A closed session of `count` chunks of 1,000 indices with 32 KiB documents, the first
    /// `published` of them acknowledged by the broker.
    func fill(_ store: GyroStore, count: Int, published: Int) async throws {
        var session = SessionRecord(id: "u___1", userId: "u", device: "d", startMs: 0, localDate: "2026-01-01")
        var changes = StoreChanges()
        for index in 0..<count {
            var chunk = ChunkRecord(id: "c\(index)", sessionId: session.id, stream: "gyro", seq: index, odrHz: 50, range: 2000,
                                    firstIndex: Int64(index * 1000))
            chunk.count = 1000
            chunk.startMs = Double(index * 1000) * 20
            chunk.endMs = Double(index * 1000 + 999) * 20
            chunk.isOpen = false
            changes.chunks.append(chunk)
            changes.documents.append(DocumentWrite(path: try DocumentPath("realtime_data/c\(index)"),
                                                   body: Array(repeating: 48, count: 32_768), retain: false, device: "d"))
            session.chunkIds.append(chunk.id)
            session.samples += 1000
        }
        session.expected = session.samples
        session.isOpen = false
        session.endMs = Double(count * 1000 - 1) * 20
        changes.sessions = [session]
        try await store.commit(changes)
        try await store.acknowledge(try await store.pendingOutbox(after: 0, limit: published).map(\.seq))
    }

    struct EndState: Equatable {
        var pruned: Int, evicted: Int, evictions: [ChunkEviction]
        var chunks: [String], session: SessionRecord?, record: Record?
        /// What the publisher would send, in order (rows a later version superseded left out).
        var counters: [Int], outbox: [String]
    }

    /// `EvictionGapTests.sessionDocuments`' record, decoded (its keys' order is not fixed).
    struct Record: Decodable, Equatable {
        var samples: Int64
        var gaps: [GapRange]
    }

    /// One pass over a fresh store of 120 chunks (40 published) at a 2 MiB limit: 40 pruned,
    /// then unpublished ones evicted.
    func pass(batchChunks: Int) async throws -> (EndState, RetentionReport) {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, maxBytes: 2 << 20, logger: testLogger())
        try await fill(store, count: 120, published: 40)
        let report = try await store.enforceRetention(batchChunks: batchChunks, sessionDocuments: EvictionGapTests.sessionDocuments)
        let record = try await store.document(try DocumentPath("records/u___1"))
        let state = EndState(
            pruned: report.prunedChunks, evicted: report.evictedUnpublishedChunks, evictions: report.evictions,
            chunks: try await store.documentIds(inCollection: "realtime_data").sorted(), session: try await store.session(id: "u___1"),
            record: try JSONDecoder().decode(Record.self, from: Data(try XCTUnwrap(record))),
            counters: [try await store.counter(GyroStore.prunedCounter), try await store.counter(GyroStore.evictedCounter)],
            outbox: try await store.pendingOutbox(after: 0, limit: 10_000).map(\.topic))
        return (state, report)
    }

    func testAPassOverManyChunksRunsInSeveralTransactionsAndEndsAsOneTransactionWould() async throws {
        let (whole, one) = try await pass(batchChunks: .max)
        let (batched, several) = try await pass(batchChunks: 8)
        XCTAssertEqual(one.transactions, 1, "the reference: the whole pass in one transaction")
        XCTAssertEqual(whole.pruned, 40, "every published chunk pruned")
        XCTAssertGreaterThan(whole.evicted, 8, "then unpublished ones evicted, more than one batch of them")
        // 40 pruned in batches of 8, then the evictions 8 at a time.
        XCTAssertGreaterThanOrEqual(several.transactions, 5 + (whole.evicted + 7) / 8)
        XCTAssertEqual(batched, whole)
        XCTAssertEqual(several.usedBytes <= 2 << 20, true)
        let session = try XCTUnwrap(batched.session)
        XCTAssertEqual(session.gaps.map(\.reason), [.storeFull], "consecutive evictions of several batches merge into one gap")
        XCTAssertEqual(session.expected - session.samples, session.gaps.reduce(0) { $0 + $1.missing })
    }

    func testTheWriterTakesACommitBetweenTwoBatches() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, maxBytes: 2 << 20, logger: testLogger())
        try await fill(store, count: 120, published: 40)
        var pass = RetentionProgress(batchChunks: 8)
        _ = try await store.retentionBatch(&pass, sessionDocuments: EvictionGapTests.sessionDocuments)
        XCTAssertFalse(pass.isDone)
        XCTAssertEqual(pass.report.prunedChunks, 8)
        // Committed between the first batch and the second, as capture's commit would be.
        var changes = StoreChanges()
        changes.sessions = [SessionRecord(id: "u___2", userId: "u", device: "e", startMs: 1, localDate: "2026-01-02")]
        try await store.commit(changes)
        while !pass.isDone { _ = try await store.retentionBatch(&pass, sessionDocuments: EvictionGapTests.sessionDocuments) }
        XCTAssertGreaterThan(pass.report.transactions, 2)
        XCTAssertEqual(pass.report.prunedChunks, 40)
        let committed = try await store.session(id: "u___2")
        XCTAssertNotNil(committed, "the commit between the batches stays")
    }
}
