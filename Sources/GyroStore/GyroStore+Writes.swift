import Foundation
import GRDB

extension GyroStore {
    /// Applies one unit of work in a single transaction: when this returns, every sample and
    /// document in `changes` is on disk, and each document has its outbox row.
    public func commit(_ changes: StoreChanges) async throws(StoreError) {
        guard !changes.isEmpty else { return }
        do {
            try await writer.write { db in try Self.apply(changes, in: db) }
        } catch {
            throw .wrapping(error, context: "committing \(changes.sampleCount) samples and \(changes.documents.count) documents")
        }
    }

    static func apply(_ changes: StoreChanges, in db: Database) throws {
        for session in changes.sessions { try session.upsert(db) }
        for chunk in changes.chunks { try chunk.upsert(db) }
        if !changes.samples.isEmpty {
            let insert = try db.cachedStatement(sql: "INSERT INTO sampleBatch (chunkId, offset, count, data) VALUES (?, ?, ?, ?)")
            for append in changes.samples where !append.samples.isEmpty {
                let blob = Data(SampleBlob.encode(append.samples))
                try insert.execute(arguments: [append.chunkId, append.offset, append.samples.count, blob])
            }
        }
        for chunkId in changes.closedChunkIds {
            try db.execute(sql: "DELETE FROM sampleBatch WHERE chunkId = ?", arguments: [chunkId])
        }
        let now = Date().timeIntervalSince1970
        for document in changes.documents { try write(document, at: now, in: db) }
        for path in changes.deletions { try delete(path, at: now, in: db) }
        for id in changes.deletedSessionIds {
            try db.execute(sql: "DELETE FROM session WHERE id = ?", arguments: [id])
        }
    }

    static func write(_ document: DocumentWrite, at now: Double, in db: Database) throws {
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO document (path, collection, body, version, retained, updatedAt) VALUES (?, ?, ?, 1, ?, ?)
            ON CONFLICT(path) DO UPDATE SET body = excluded.body, version = version + 1,
                retained = excluded.retained, updatedAt = excluded.updatedAt
            RETURNING version
            """)
        let body = Data(document.body)
        let version = try Int64.fetchOne(upsert, arguments: [document.path.rawValue, document.path.collection, body, document.retain, now]) ?? 1
        let outbox = try db.cachedStatement(sql: """
            INSERT INTO outbox (topic, qos, retain, documentPath, documentVersion, payload, bytes, device, createdAt)
            VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?)
            """)
        try outbox.execute(arguments: [document.path.rawValue, document.qos, document.retain, document.path.rawValue,
                                       version, document.body.count, document.device, now])
    }

    /// A deleted document is a zero-byte retained publish, the MQTT way of clearing a retained topic.
    static func delete(_ path: DocumentPath, at now: Double, in db: Database) throws {
        try db.execute(sql: "DELETE FROM document WHERE path = ?", arguments: [path.rawValue])
        try db.execute(sql: """
            INSERT INTO outbox (topic, qos, retain, documentPath, documentVersion, payload, bytes, device, createdAt)
            VALUES (?, 1, 1, ?, NULL, x'', 0, NULL, ?)
            """, arguments: [path.rawValue, path.rawValue, now])
    }

    static func increment(_ counter: String, by amount: Int, in db: Database) throws {
        try db.execute(sql: """
            INSERT INTO counter (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value
            """, arguments: [counter, amount])
    }
}
