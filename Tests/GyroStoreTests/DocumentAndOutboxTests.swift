import Foundation
@testable import GyroStore
import TestSupport
import XCTest

final class DocumentAndOutboxTests: XCTestCase {
    func write(_ store: GyroStore, _ path: String, _ body: String, retain: Bool = true) async throws {
        var changes = StoreChanges()
        changes.documents = [DocumentWrite(path: try DocumentPath(path), body: Array(body.utf8), retain: retain, device: "d1")]
        try await store.commit(changes)
    }

    func testAFreshFileIsMigratedAndDocumentsRoundTrip() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        try await write(store, "records/u1___100", #"{"a":1}"#)
        let body = try await store.document(try DocumentPath("records/u1___100"))
        XCTAssertEqual(body.map { String(decoding: $0, as: UTF8.self) }, #"{"a":1}"#)
        let ids = try await store.documentIds(inCollection: "records")
        XCTAssertEqual(ids, ["u1___100"])
        let integrity = try await store.integrityCheck()
        XCTAssertEqual(integrity, "ok")
    }

    func testEachWriteAddsAnOutboxRowAndSupersededVersionsAreNotSent() async throws {
        let store = try GyroStore.inMemory(logger: testLogger())
        try await write(store, "records/r1", "v1")
        try await write(store, "records/r2", "other", retain: false)
        try await write(store, "records/r1", "v2")
        let pending = try await store.pendingOutbox(after: 0, limit: 10)
        XCTAssertEqual(pending.map { String(decoding: $0.payload, as: UTF8.self) }, ["other", "v2"], "v1 was superseded by v2")
        XCTAssertEqual(pending.map(\.retain), [false, true])
        XCTAssertEqual(pending.map(\.topic), ["records/r2", "records/r1"])
        XCTAssertTrue(pending[0].seq < pending[1].seq)
        let stats = try await store.outboxStats()
        XCTAssertEqual(stats.depth, 2)
        try await store.acknowledge([pending[0].seq])
        let after = try await store.pendingOutbox(after: 0, limit: 10)
        XCTAssertEqual(after.map(\.seq), [pending[1].seq])
    }

    /// A path deleted and then written again: the deletion is not sent after the new document
    /// (a subscriber would be left without it).
    func testADeletionIsSupersededByALaterWriteOfThePath() async throws {
        let store = try GyroStore.inMemory(logger: testLogger())
        try await write(store, "records/r1", "empty")
        var changes = StoreChanges()
        changes.deletions = [try DocumentPath("records/r1")]
        try await store.commit(changes)
        try await write(store, "records/r1", "with samples")
        let pending = try await store.pendingOutbox(after: 0, limit: 10)
        // The first write's row reads the document as it is now (at least once: the same bytes twice).
        XCTAssertEqual(pending.map { String(decoding: $0.payload, as: UTF8.self) }, ["with samples", "with samples"])
        var again = StoreChanges()
        again.deletions = [try DocumentPath("records/r1")]
        try await store.commit(again)
        let deleted = try await store.pendingOutbox(after: 0, limit: 10)
        XCTAssertEqual(deleted.map(\.payload.count), [0], "a deletion still pending is sent")
    }

    /// The publisher's read: rows handed over as their bodies are read, a pass that stops
    /// where the receiver declined, superseded rows passed over (and removed) in order.
    func testDeliveringTheOutboxStopsWhereTheReceiverDeclines() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let large = String(repeating: "x", count: 150_000)
        try await write(store, "realtime_data/c1", large, retain: false)
        try await write(store, "records/r1", "v1")
        try await write(store, "records/r1", "v2")
        try await write(store, "realtime_data/c2", "small", retain: false)

        let seen = Locked<[(seq: Int64, topic: String, body: String)]>([])
        let first = try await store.deliverOutbox(after: 0, limit: 10) { row in
            guard row.topic != "realtime_data/c2" else { return false }
            seen.withLock { $0.append((row.seq, row.topic, String(decoding: row.payload, as: UTF8.self))) }
            return true
        }
        let rows = seen.withLock { $0 }
        XCTAssertEqual(rows.map(\.topic), ["realtime_data/c1", "records/r1"], "v1 of records/r1 is superseded and not handed over")
        XCTAssertEqual(rows.first?.body.count, 150_000, "a body spread over overflow pages arrives whole")
        XCTAssertEqual(rows.last?.body, "v2")
        XCTAssertEqual(first.delivered, 2)
        XCTAssertTrue(first.stopped)
        XCTAssertEqual(first.lastSeq, rows.last?.seq, "the pass ends at the last row accepted")

        let rest = try await store.deliverOutbox(after: first.lastSeq ?? 0, limit: 10) { _ in true }
        XCTAssertEqual(rest.delivered, 1)
        XCTAssertFalse(rest.stopped)
        let depth = try await store.outboxStats().depth
        XCTAssertEqual(depth, 3, "the superseded row was removed; the others stay until acknowledged")
        let nothing = try await store.deliverOutbox(after: rest.lastSeq ?? 0, limit: 10) { _ in true }
        XCTAssertEqual(nothing, OutboxPass())
    }

    func testADeletedDocumentIsAZeroByteRetainedPublish() async throws {
        let store = try GyroStore.inMemory(logger: testLogger())
        try await write(store, "TitanUpUsers/u/DailySessions/s1", "x")
        var changes = StoreChanges()
        changes.deletions = [try DocumentPath("TitanUpUsers/u/DailySessions/s1")]
        try await store.commit(changes)
        let pending = try await store.pendingOutbox(after: 0, limit: 10)
        XCTAssertEqual(pending.count, 1, "the write before the delete is superseded")
        XCTAssertEqual(pending[0].payload, [])
        XCTAssertTrue(pending[0].retain)
        let gone = try await store.document(try DocumentPath("TitanUpUsers/u/DailySessions/s1"))
        XCTAssertNil(gone)
    }

    func testRetainedDocumentsCanBeReasserted() async throws {
        let store = try GyroStore.inMemory(logger: testLogger())
        try await write(store, "records/a", "1")
        try await write(store, "realtime_data/c", "2", retain: false)
        let retained = try await store.retainedDocuments()
        XCTAssertEqual(retained.map(\.topic), ["records/a"])
    }

    /// Resync runs after every new broker session: it must not read every chunk document.
    func testRetainedDocumentsAreListedFromTheirIndexNotATableScan() async throws {
        let directory = try TemporaryDirectory("retained-index")
        defer { directory.remove() }
        let store = try GyroStore.open(directory: directory.path, maxBytes: 1 << 30, logger: testLogger())
        try await write(store, "records/a", "1")
        try await write(store, "realtime_data/c", "2", retain: false)
        let plan = try await store.queryPlan(GyroStore.retainedDocumentsSQL)
        // Without it: "SCAN document USING INDEX sqlite_autoindex_document_1", every row visited.
        XCTAssertEqual(plan, ["SCAN document USING INDEX document_retained_path"])
        let retained = try await store.retainedDocuments()
        XCTAssertEqual(retained.map(\.topic), ["records/a"])
    }

    /// A document's current version, which decides whether an outbox row is superseded, must come
    /// from an index: in the table it is stored after the body, behind its overflow chain.
    func testDeliveryReadsDocumentVersionsFromTheirIndex() async throws {
        let directory = try TemporaryDirectory("version-index")
        defer { directory.remove() }
        let store = try GyroStore.open(directory: directory.path, maxBytes: 1 << 30, logger: testLogger())
        try await write(store, "realtime_data/c", String(repeating: "7", count: 150_000), retain: false)
        let plan = try await store.queryPlan(GyroStore.outboxPassSQL, arguments: [0, 10])
        XCTAssertTrue(plan.contains("SEARCH d USING INDEX document_path_version (path=?) LEFT-JOIN"), "\(plan)")
        let rows = try await store.pendingOutbox(after: 0, limit: 10)
        XCTAssertEqual(rows.map(\.payload.count), [150_000])
    }

    func testDocumentPathsRejectWildcardsAndOddSegments() {
        for bad in ["records", "records/a/b", "records/a+b", "records/#", "$SYS/x", "records//x", "a/../b/c", ""] {
            XCTAssertThrowsError(try DocumentPath(bad), bad)
        }
        XCTAssertEqual(try DocumentPath("TitanUpUsers/u/DailySessions/s").collection, "TitanUpUsers/u/DailySessions")
        XCTAssertTrue(DocumentPath.isCollectionPath("TitanUpUsers/u/DailySessions"))
        XCTAssertFalse(DocumentPath.isCollectionPath("records/x"))
    }

    func testSampleBlobsRoundTrip() {
        let samples = (0..<5).map { StoredSample(timestampMs: 1e12 + Double($0) * 2.5, x: Float($0), y: -1.25, z: .pi) }
        var decoded: [StoredSample] = []
        XCTAssertTrue(SampleBlob.decode(SampleBlob.encode(samples[...]), into: &decoded))
        XCTAssertEqual(decoded, samples)
        XCTAssertFalse(SampleBlob.decode([1, 2, 3], into: &decoded))
    }
}

/// A value shared with a `@Sendable` closure in a test.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
