import Foundation
@testable import GyroStore
import TestSupport
import XCTest

/// Stores written by the gateway's GRDB versions: their migration history lives in GRDB's
/// `grdb_migrations` table, and they must open with their data, migrate no more and no less
/// than they lack, and take new writes.
final class GRDBEraStoreTests: XCTestCase {
    /// The schema as GRDB's migrator left it after each migration, copied from a store file it
    /// wrote (`SELECT sql FROM sqlite_master`), with the rows it recorded.
    static let grdbMigrations: [(identifier: String, sql: String)] = [
        ("v1", """
            CREATE TABLE "document" ("path" TEXT PRIMARY KEY NOT NULL, "collection" TEXT NOT NULL, "body" BLOB NOT NULL, "version" INTEGER NOT NULL, "retained" BOOLEAN NOT NULL, "updatedAt" DOUBLE NOT NULL);
            CREATE INDEX "document_on_collection" ON "document"("collection");
            CREATE TABLE "outbox" ("seq" INTEGER PRIMARY KEY AUTOINCREMENT, "topic" TEXT NOT NULL, "qos" INTEGER NOT NULL, "retain" BOOLEAN NOT NULL, "properties" TEXT, "documentPath" TEXT, "documentVersion" INTEGER, "payload" BLOB, "bytes" INTEGER NOT NULL, "device" TEXT, "createdAt" DOUBLE NOT NULL);
            CREATE INDEX "outbox_on_documentPath" ON "outbox"("documentPath");
            CREATE TABLE "session" ("id" TEXT PRIMARY KEY NOT NULL, "userId" TEXT NOT NULL, "device" TEXT NOT NULL, "startMs" DOUBLE NOT NULL, "endMs" DOUBLE, "lastSampleMs" DOUBLE, "samples" INTEGER NOT NULL, "expected" INTEGER NOT NULL, "hazards" TEXT NOT NULL, "chunkIds" TEXT NOT NULL, "accelChunkIds" TEXT NOT NULL, "gaps" TEXT NOT NULL, "isOpen" BOOLEAN NOT NULL, "localDate" TEXT NOT NULL);
            CREATE INDEX "session_on_userId" ON "session"("userId");
            CREATE INDEX "session_on_startMs" ON "session"("startMs");
            CREATE TABLE "chunk" ("id" TEXT PRIMARY KEY NOT NULL, "sessionId" TEXT NOT NULL REFERENCES "session"("id") ON DELETE CASCADE, "stream" TEXT NOT NULL, "seq" INTEGER NOT NULL, "odrHz" DOUBLE NOT NULL, "range" DOUBLE NOT NULL, "firstIndex" INTEGER NOT NULL, "count" INTEGER NOT NULL, "startMs" DOUBLE, "endMs" DOUBLE, "gaps" TEXT NOT NULL, "isOpen" BOOLEAN NOT NULL, "pruned" BOOLEAN NOT NULL);
            CREATE INDEX "chunk_on_sessionId" ON "chunk"("sessionId");
            CREATE INDEX "chunk_on_endMs" ON "chunk"("endMs");
            CREATE TABLE "sampleBatch" ("chunkId" TEXT NOT NULL REFERENCES "chunk"("id") ON DELETE CASCADE, "offset" INTEGER NOT NULL, "count" INTEGER NOT NULL, "data" BLOB NOT NULL, PRIMARY KEY ("chunkId", "offset"));
            CREATE TABLE "counter" ("name" TEXT PRIMARY KEY NOT NULL, "value" INTEGER NOT NULL);
            """),
        ("v2-outbox-parking", """
            ALTER TABLE "outbox" ADD COLUMN "refusals" INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE "outbox" ADD COLUMN "parkedAt" DOUBLE;
            ALTER TABLE "outbox" ADD COLUMN "parkedReason" TEXT;
            """),
        ("v3-retained-documents-index", "CREATE INDEX document_retained_path ON document(path) WHERE retained = 1"),
        ("v4-document-version-index", "CREATE INDEX document_path_version ON document(path, version)"),
        ("v5-board-reset-times", """
            CREATE TABLE boardResetTime (device TEXT NOT NULL COLLATE NOCASE, resetUID INTEGER NOT NULL, resetTime REAL NOT NULL,
                                         PRIMARY KEY (device, resetUID))
            """),
    ]

    /// Writes a store file as a GRDB-era gateway left it after its first `applied` migrations,
    /// with a closed session, its chunk and document, an unpublished outbox row, an open chunk's
    /// samples and a counter.
    func makeGRDBEraStore(in folder: TemporaryDirectory, applied: Int) throws {
        let db = try SQLiteConnection(path: folder.file(GyroStore.fileName))
        try db.execute("PRAGMA journal_mode = WAL")
        try db.execute("CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)")
        for (identifier, sql) in Self.grdbMigrations.prefix(applied) {
            try db.execute("BEGIN IMMEDIATE; \(sql); INSERT INTO grdb_migrations VALUES ('\(identifier)'); COMMIT")
        }
        try db.execute("""
            INSERT INTO session VALUES ('u___1700000000', 'u', 'C8:4B:52:AA:BB:CC', 1700000000000, 1700000060000, 1700000059990,
                                        1200, 1210, '{"drop":1}', 'c0,c3', 'c1', '[]', 0, '2023-11-14');
            INSERT INTO session VALUES ('u___1700000100', 'u', 'C8:4B:52:AA:BB:CC', 1700000100000, NULL, NULL, 2, 2, '{}', 'c2', '', '[]', 1, '2023-11-14');
            INSERT INTO chunk VALUES ('c0', 'u___1700000000', 'gyro', 0, 100, 2000, 0, 1200, 1700000000000, 1700000059990, '[]', 0, 0);
            -- c3: its document pruned after publication (still listed); c4: evicted unpublished (not listed).
            INSERT INTO chunk VALUES ('c3', 'u___1700000000', 'gyro', 1, 100, 2000, 1200, 0, 1700000060000, 1700000060000, '[]', 0, 1);
            INSERT INTO chunk VALUES ('c4', 'u___1700000000', 'gyro', 2, 100, 2000, 1200, 10, 1700000060010, 1700000060100, '[]', 0, 1);
            INSERT INTO chunk VALUES ('c2', 'u___1700000100', 'gyro', 0, 100, 2000, 0, 2, 1700000100000, 1700000100010, '[]', 1, 0);
            INSERT INTO document VALUES ('realtime_data/c0', 'realtime_data', CAST('{"chunk":0}' AS BLOB), 1, 0, 1700000061.5);
            INSERT INTO document VALUES ('records/u___1700000000', 'records', CAST('{"record":1}' AS BLOB), 3, 1, 1700000061.5);
            INSERT INTO outbox (topic, qos, retain, properties, documentPath, documentVersion, payload, bytes, device, createdAt)
                VALUES ('realtime_data/c0', 1, 0, NULL, 'realtime_data/c0', 1, NULL, 11, 'C8:4B:52:AA:BB:CC', 1700000061.5);
            INSERT INTO counter VALUES ('prunedChunks', 7);
            """)
        let samples = SampleBlob.encode([StoredSample(timestampMs: 1700000100000, x: 1, y: 2, z: 3),
                                         StoredSample(timestampMs: 1700000100010, x: 4, y: 5, z: 6)][...])
        try db.run("INSERT INTO sampleBatch VALUES ('c2', 0, 2, ?)", [samples])
    }

    func testAStoreWrittenThroughGRDBOpensWithItsDataAndTakesNewWrites() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        try makeGRDBEraStore(in: folder, applied: Self.grdbMigrations.count)
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())

        let record = try await store.document(try DocumentPath("records/u___1700000000"))
        XCTAssertEqual(record.map { String(decoding: $0, as: UTF8.self) }, #"{"record":1}"#)
        let session = try await store.session(id: "u___1700000000")
        XCTAssertEqual(session?.samples, 1200)
        XCTAssertEqual(session?.hazards, ["drop": 1])
        XCTAssertEqual(session?.chunkIds, ["c0", "c3"], "the lists come from the chunk table: a pruned chunk stays listed")
        XCTAssertEqual(session?.chunkCount, 2)
        let chunksOfSession = try await store.chunks(sessionId: "u___1700000000")
        XCTAssertEqual(chunksOfSession.map(\.id), ["c0", "c3"], "the chunk evicted unpublished (listed nowhere) is gone")
        let summaries = try await store.sessions(chunkLists: false)
        XCTAssertEqual(summaries.map(\.chunkCount), [2, 0], "a summary's count is the row's")
        XCTAssertEqual(summaries.map(\.chunkIds), [[], []])
        XCTAssertEqual(session?.isOpen, false)
        let open = try await store.openSessions()
        XCTAssertEqual(open.map(\.id), ["u___1700000100"])
        let chunks = try await store.openChunks(sessionId: "u___1700000100")
        XCTAssertEqual(chunks.map(\.id), ["c2"])
        let samples = try await store.samples(ofChunk: "c2")
        XCTAssertEqual(samples, [StoredSample(timestampMs: 1700000100000, x: 1, y: 2, z: 3),
                                 StoredSample(timestampMs: 1700000100010, x: 4, y: 5, z: 6)])
        let pruned = try await store.counter(GyroStore.prunedCounter)
        XCTAssertEqual(pruned, 7)
        let pending = try await store.pendingOutbox(after: 0, limit: 10)
        XCTAssertEqual(pending.map(\.topic), ["realtime_data/c0"])
        XCTAssertEqual(pending.first.map { String(decoding: $0.payload, as: UTF8.self) }, #"{"chunk":0}"#)

        // New writes: a rewritten record gets version 4 and an outbox row after the old one.
        var changes = StoreChanges()
        changes.documents = [DocumentWrite(path: try DocumentPath("records/u___1700000000"), body: Array(#"{"record":2}"#.utf8),
                                           retain: true, device: nil)]
        try await store.commit(changes)
        let after = try await store.pendingOutbox(after: 0, limit: 10)
        XCTAssertEqual(after.map(\.topic), ["realtime_data/c0", "records/u___1700000000"])
        try await store.saveBoardResetTime(device: "C8:4B:52:AA:BB:CC", resetUID: 3, resetTime: 1700000000.25)
        let resets = try await store.boardResetTimes(device: "c8:4b:52:aa:bb:cc")
        XCTAssertEqual(resets, [3: 1700000000.25])

        let history = try await store.read("reading the migrations") { db in try SchemaMigrator.applied(in: db) }
        XCTAssertEqual(history, Set(Self.grdbMigrations.map(\.identifier) + ["v6-sample-ring", "v7-dating", "v8-open-and-unpruned-indexes", "v9-chunk-lists-from-chunks", "v10-inherited-chunks"]), "no migration was recorded twice; the ring, the dating and the open rows' indexes added")
        let integrity = try await store.integrityCheck()
        XCTAssertEqual(integrity, "ok")
    }

    /// A store from before the last migrations gets exactly those, recorded in the same table.
    func testAnOlderGRDBStoreGetsOnlyTheMigrationsItLacks() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        try makeGRDBEraStore(in: folder, applied: 3)
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let history = try await store.read("reading the migrations") { db in
            try db.all("SELECT identifier FROM grdb_migrations ORDER BY rowid") { try $0.text(0) }
        }
        XCTAssertEqual(history, Self.grdbMigrations.map(\.identifier) + ["v6-sample-ring", "v7-dating", "v8-open-and-unpruned-indexes", "v9-chunk-lists-from-chunks", "v10-inherited-chunks"])
        let plan = try await store.queryPlan(GyroStore.outboxPassSQL, arguments: [0, 10])
        XCTAssertTrue(plan.contains { $0.contains("document_path_version") }, "\(plan)")
        try await store.saveBoardResetTime(device: "C8:4B:52:AA:BB:CC", resetUID: 1, resetTime: 1)
        let session = try await store.session(id: "u___1700000000")
        XCTAssertEqual(session?.samples, 1200)
    }

    /// A new store and an upgraded one have one schema: the migrations' SQL is GRDB's, verbatim.
    func testANewStoreHasTheSchemaGRDBBuilt() async throws {
        let old = try TemporaryDirectory(), new = try TemporaryDirectory()
        defer { old.remove(); new.remove() }
        try makeGRDBEraStore(in: old, applied: Self.grdbMigrations.count)
        func schema(_ folder: TemporaryDirectory) async throws -> [String] {
            let store = try GyroStore.open(directory: folder.path, logger: testLogger())
            return try await store.read("reading the schema") { db in
                try db.all("SELECT type || ' ' || name || ': ' || COALESCE(sql, '') FROM sqlite_master ORDER BY name") { try $0.text(0) }
            }
        }
        let upgraded = try await schema(old), created = try await schema(new)
        XCTAssertEqual(created, upgraded)
    }
}
