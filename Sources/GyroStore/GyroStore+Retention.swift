import FoundationEssentials

/// What one retention pass did.
public struct RetentionReport: Sendable, Equatable {
    public var usedBytes: Int
    /// Published chunk documents removed, oldest first.
    public var prunedChunks: Int
    /// Unpublished chunk documents removed because nothing published was left to prune.
    public var evictedUnpublishedChunks: Int
    /// What each of those held, as recorded in its session (oldest first).
    public var evictions: [ChunkEviction] = []
    /// The limit the pass kept the store under, and what set it.
    public var limit = WorkingLimit(bytes: 0, bound: .configured)

    /// Whether the pass evicted unpublished data because the disk had no room for it (rather
    /// than because the store reached `retention.maxStoreBytes`).
    public var evictedForLackOfDisk: Bool { evictedUnpublishedChunks > 0 && limit.bound == .disk }
}

extension GyroStore {
    public static let evictedCounter = "evictedUnpublishedChunks"
    public static let prunedCounter = "prunedChunks"

    /// Keeps the store under its working limit: `maxBytes`, or less when the disk has less room.
    ///
    /// Policy: first remove chunk documents the broker has acknowledged, oldest first, down to
    /// 90 % of the limit. If the store is still over the limit, only unpublished data is left;
    /// capture keeps the newest data, so the oldest unpublished chunk documents are evicted,
    /// each one logged as an error and counted (`evictedUnpublishedChunks`, shown in the
    /// status). Sessions, records and open chunks are never pruned.
    ///
    /// An evicted chunk's samples become a `storeFull` gap of its session (`recordEviction`),
    /// and the session's documents, from `sessionDocuments` (the records and DailySessions
    /// renderings, which the store does not know), are rewritten with their outbox rows in the
    /// same transaction as the eviction: no crash can leave a record that hides the loss.
    /// The caller must keep any copy of those sessions it holds in sync (`report.evictions`).
    ///
    /// The limit is the working limit (``WorkingLimit``), measured in the pass's transaction:
    /// `maxBytes`, or less when the disk has less room; `report.limit` says which.
    @discardableResult
    public func enforceRetention(
        sessionDocuments: @escaping @Sendable (SessionRecord) -> [DocumentWrite]
    ) async throws(StoreError) -> RetentionReport {
        let logger = self.logger
        do {
            return try await write { db in
                let working = try self.workingLimit(in: db)
                let limit = working.bytes, target = limit / 10 * 9
                var report = RetentionReport(usedBytes: try Self.usedBytes(db), prunedChunks: 0, evictedUnpublishedChunks: 0, limit: working)
                guard report.usedBytes > limit else { return report }
                while report.usedBytes > target {
                    let removed = try Self.removeChunkDocuments(published: true, limit: 32, in: db)
                    if removed.isEmpty { break }
                    report.prunedChunks += removed.count
                    report.usedBytes = try Self.usedBytes(db)
                }
                var sessions: [String: SessionRecord] = [:]
                while report.usedBytes > limit {
                    let removed = try Self.removeChunkDocuments(published: false, limit: 1, in: db)
                    if removed.isEmpty { break }
                    report.evictedUnpublishedChunks += removed.count
                    for chunk in try removed.compactMap({ id in
                        try db.first("SELECT \(ChunkRecord.columns) FROM chunk WHERE id = ?", [id], ChunkRecord.init(row:))
                    }) {
                        let eviction = ChunkEviction(chunk: chunk)
                        report.evictions.append(eviction)
                        // Read while the chunk is still there, so that its samples are counted
                        // before the eviction takes them off.
                        let stored = try sessions[chunk.sessionId] ?? SessionRecord.read(db, "WHERE id = ?", [chunk.sessionId], lists: true).first
                        // An evicted chunk is no longer listed: its row goes with its document.
                        try db.run("DELETE FROM chunk WHERE id = ?", [chunk.id])
                        guard var session = stored else { continue }
                        session.recordEviction(eviction)
                        sessions[chunk.sessionId] = session
                    }
                    logger.error("evicted unpublished chunk documents: \(working.bound == .disk ? "the disk has no room for them" : "the store reached retention.maxStoreBytes"); their samples are now storeFull gaps of their sessions", metadata: [
                        "subsystem": "store", "chunks": "\(removed.joined(separator: ","))", "limitBytes": "\(limit)",
                        "limitSetBy": "\(working.bound.rawValue)", "diskRoomBytes": "\(working.diskRoomBytes.map { "\($0)" } ?? "-")",
                        "samples": "\(report.evictions.suffix(removed.count).reduce(0) { $0 + $1.samples })",
                    ])
                    report.usedBytes = try Self.usedBytes(db)
                }
                if !sessions.isEmpty {
                    let now = Date().timeIntervalSince1970
                    for (_, session) in sessions.sorted(by: { $0.key < $1.key }) {
                        try session.upsert(db)
                        for document in sessionDocuments(session) { try Self.write(document, at: now, in: db) }
                    }
                    report.usedBytes = try Self.usedBytes(db)
                }
                try Self.increment(Self.prunedCounter, by: report.prunedChunks, in: db)
                try Self.increment(Self.evictedCounter, by: report.evictedUnpublishedChunks, in: db)
                return report
            }
        } catch {
            throw .wrapping(error, context: "enforcing the store limit")
        }
    }

    /// Removes up to `limit` of the oldest closed chunk documents that are (or are not) still in the outbox.
    static func removeChunkDocuments(published: Bool, limit: Int, in db: SQLiteConnection) throws -> [String] {
        let pending = "EXISTS (SELECT 1 FROM outbox o WHERE o.documentPath = '\(DocumentPath.chunkCollection)/' || c.id)"
        let ids = try db.all("""
            SELECT c.id FROM chunk c WHERE c.isOpen = 0 AND c.pruned = 0 AND \(published ? "NOT " : "")\(pending)
            ORDER BY c.endMs LIMIT ?
            """, [limit]) { try $0.text(0) }
        for id in ids {
            let path = "\(DocumentPath.chunkCollection)/\(id)"
            try db.run("DELETE FROM document WHERE path = ?", [path])
            try db.run("DELETE FROM outbox WHERE documentPath = ?", [path])
            try db.run("UPDATE chunk SET pruned = 1 WHERE id = ?", [id])
        }
        return ids
    }
}
