import Foundation
import GRDB

extension GyroStore {
    /// The JSON body of one document, or `nil`.
    public func document(_ path: DocumentPath) async throws(StoreError) -> [UInt8]? {
        try await read("reading \(path)") { db in
            try Data.fetchOne(db, sql: "SELECT body FROM document WHERE path = ?", arguments: [path.rawValue]).map { [UInt8]($0) }
        }
    }

    /// The ids of the documents directly in a collection, sorted.
    public func documentIds(inCollection collection: String) async throws(StoreError) -> [String] {
        try await read("listing \(collection)") { db in
            try String.fetchAll(db, sql: "SELECT path FROM document WHERE collection = ? ORDER BY path", arguments: [collection])
                .map { String($0.dropFirst(collection.count + 1)) }
        }
    }

    public func session(id: String) async throws(StoreError) -> SessionRecord? {
        try await read("reading session \(id)") { db in try SessionRecord.fetchOne(db, key: id) }
    }

    /// Sessions that started in `[fromMs, toMs)`, optionally of one user, oldest first.
    public func sessions(startingFrom fromMs: Double = -.infinity, before toMs: Double = .infinity, userId: String? = nil) async throws(StoreError) -> [SessionRecord] {
        try await read("listing sessions") { db in
            var request = SessionRecord.filter(Column("startMs") >= fromMs && Column("startMs") < toMs)
            if let userId { request = request.filter(Column("userId") == userId) }
            return try request.order(Column("startMs")).fetchAll(db)
        }
    }

    public func openSessions() async throws(StoreError) -> [SessionRecord] {
        try await read("listing open sessions") { db in
            try SessionRecord.filter(Column("isOpen") == true).order(Column("startMs")).fetchAll(db)
        }
    }

    public func openChunks(sessionId: String) async throws(StoreError) -> [ChunkRecord] {
        try await read("listing open chunks") { db in
            try ChunkRecord.filter(Column("sessionId") == sessionId && Column("isOpen") == true).order(Column("stream"), Column("seq")).fetchAll(db)
        }
    }

    public func chunks(sessionId: String) async throws(StoreError) -> [ChunkRecord] {
        try await read("listing chunks") { db in
            try ChunkRecord.filter(Column("sessionId") == sessionId).order(Column("stream"), Column("seq")).fetchAll(db)
        }
    }

    /// The stored samples of an open chunk, in order.
    public func samples(ofChunk chunkId: String) async throws(StoreError) -> [StoredSample] {
        let blobs = try await read("reading samples of \(chunkId)") { db in
            try Data.fetchAll(db, sql: "SELECT data FROM sampleBatch WHERE chunkId = ? ORDER BY offset", arguments: [chunkId])
        }
        var samples: [StoredSample] = []
        for blob in blobs where !SampleBlob.decode(blob, into: &samples) {
            throw .damagedSamples(chunk: chunkId, reason: "a blob of \(blob.count) bytes is not a whole number of samples")
        }
        return samples
    }

    public func counter(_ name: String) async throws(StoreError) -> Int {
        try await read("reading counter") { db in try Int.fetchOne(db, sql: "SELECT value FROM counter WHERE name = ?", arguments: [name]) ?? 0 }
    }

    /// `PRAGMA integrity_check`: "ok" or SQLite's list of problems.
    public func integrityCheck() async throws(StoreError) -> String {
        try await read("checking integrity") { db in try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ") }
    }

    /// Bytes in use by live pages (what retention bounds).
    public func usedBytes() async throws(StoreError) -> Int {
        try await read("measuring the store") { db in try Self.usedBytes(db) }
    }

    static func usedBytes(_ db: Database) throws -> Int {
        let pages = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let free = try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
        let size = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
        return (pages - free) * size
    }

    func read<T: Sendable>(_ context: String, _ body: @escaping @Sendable (Database) throws -> T) async throws(StoreError) -> T {
        do { return try await writer.read(body) } catch {
            throw .database(context: context, reason: "\(error)")
        }
    }
}
