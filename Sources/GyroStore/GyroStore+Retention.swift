import FoundationEssentials
import Logging

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
    /// The write transactions the pass ran (``RetentionProgress``).
    public var transactions = 0

    /// Whether the pass evicted unpublished data because the disk had no room for it (rather
    /// than because the store reached `retention.maxStoreBytes`).
    public var evictedForLackOfDisk: Bool { evictedUnpublishedChunks > 0 && limit.bound == .disk }
}

/// Where a retention pass stands between two of its write transactions.
///
/// Why in batches: the store has one writer, and a pass over a full 2 GiB store removed 25,600
/// chunks in one transaction of 7 s, during which no capture commit could run (the watchdog's
/// stall limit is 10 s; a Pi's SD card is slower). Each ``GyroStore/retentionBatch(_:sessionDocuments:)``
/// removes at most `batchChunks` chunks in a transaction of its own, and the writer takes other
/// work (capture's commits, the publisher's acknowledgements) between two of them.
public struct RetentionProgress: Sendable {
    /// Chunks one transaction removes at most: 0.28 s at most on this VM at 0.5 GiB, the file
    /// out of the page cache, where the pass in one transaction took 2.0-2.2 s
    /// (docs/benchmarks-store.md). A multiple of `pruneStep`.
    public static let defaultBatchChunks = 256
    /// Published chunks are pruned this many at a time between two measures of the store's
    /// size; a batch holds whole steps, so that the pass prunes what one transaction would.
    static let pruneStep = 32

    enum Phase: Sendable { case start, pruning, evicting, done }

    public let batchChunks: Int
    public internal(set) var report = RetentionReport(usedBytes: 0, prunedChunks: 0, evictedUnpublishedChunks: 0)
    var phase = Phase.start

    /// `batchChunks` `Int.max`: the whole pass in one transaction (as before batches).
    public init(batchChunks: Int = Self.defaultBatchChunks) {
        self.batchChunks = max(1, batchChunks)
    }

    public var isDone: Bool { phase == .done }
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
    /// The limit is the working limit (``WorkingLimit``), measured in the pass's first
    /// transaction: `maxBytes`, or less when the disk has less room; `report.limit` says which.
    /// The pass runs in transactions of at most `batchChunks` chunks (``RetentionProgress``).
    @discardableResult
    public func enforceRetention(
        batchChunks: Int = RetentionProgress.defaultBatchChunks,
        sessionDocuments: @escaping @Sendable (SessionRecord) -> [DocumentWrite]
    ) async throws(StoreError) -> RetentionReport {
        var pass = RetentionProgress(batchChunks: batchChunks)
        while !pass.isDone { _ = try await retentionBatch(&pass, sessionDocuments: sessionDocuments) }
        return pass.report
    }

    /// One transaction of a retention pass: prunes or evicts at most `pass.batchChunks` chunks,
    /// counts them and, for evictions, rewrites their sessions' rows and documents. Returns
    /// this batch's evictions, for the caller's copies of those sessions.
    public func retentionBatch(
        _ pass: inout RetentionProgress,
        sessionDocuments: @escaping @Sendable (SessionRecord) -> [DocumentWrite]
    ) async throws(StoreError) -> [ChunkEviction] {
        guard !pass.isDone else { return [] }
        let logger = self.logger, before = pass
        do {
            let (after, evictions) = try await write { db in
                var pass = before
                pass.report.transactions += 1
                if pass.phase == .start {
                    pass.report.limit = try self.workingLimit(in: db)
                    pass.report.usedBytes = try Self.usedBytes(db)
                    pass.phase = pass.report.usedBytes > pass.report.limit.bytes ? .pruning : .done
                }
                var budget = pass.batchChunks
                if pass.phase == .pruning { try Self.prune(&pass, budget: &budget, in: db) }
                var evictions: [ChunkEviction] = []
                if pass.phase == .evicting, budget > 0 {
                    evictions = try Self.evict(&pass, budget: budget, in: db, logger: logger, sessionDocuments: sessionDocuments) {
                        try self.workingLimit(in: db)
                    }
                }
                return (pass, evictions)
            }
            pass = after
            return evictions
        } catch {
            throw .wrapping(error, context: "enforcing the store limit")
        }
    }

    /// Prunes published chunks, `pruneStep` at a time, down to 90 % of the limit or until the
    /// batch's budget is spent; moves the pass on once nothing published is left or the target is met.
    private static func prune(_ pass: inout RetentionProgress, budget: inout Int, in db: SQLiteConnection) throws {
        let target = pass.report.limit.bytes / 10 * 9
        let step = min(RetentionProgress.pruneStep, pass.batchChunks)
        var pruned = 0
        defer { pass.report.prunedChunks += pruned }
        while pass.report.usedBytes > target {
            guard budget >= step else {
                try increment(prunedCounter, by: pruned, in: db)
                return
            }
            let removed = try removeChunkDocuments(published: true, limit: step, in: db)
            if removed.isEmpty { break }
            pruned += removed.count
            budget -= removed.count
            pass.report.usedBytes = try usedBytes(db)
        }
        try increment(prunedCounter, by: pruned, in: db)
        pass.phase = pass.report.usedBytes > pass.report.limit.bytes ? .evicting : .done
    }

    /// Evicts the oldest unpublished chunks, one at a time, until the store is under its limit
    /// or `budget` are gone; then writes their sessions' rows and documents.
    private static func evict(
        _ pass: inout RetentionProgress, budget: Int, in db: SQLiteConnection, logger: Logger,
        sessionDocuments: @Sendable (SessionRecord) -> [DocumentWrite], measure: () throws -> WorkingLimit
    ) throws -> [ChunkEviction] {
        var working = pass.report.limit
        var sessions: [String: SessionRecord] = [:], evictions: [ChunkEviction] = []
        var left = budget
        pass.phase = .done
        // Measured again before each eviction: space given back while a pass runs (the status
        // already says ok) ends its evictions at once. The limit only rises here, so a pass
        // never evicts more than its first measurement asked for.
        while pass.report.usedBytes > working.bytes {
            let now = try measure()
            if now.bytes > working.bytes {
                working = now
                pass.report.limit = now
                if pass.report.usedBytes <= working.bytes { break }
            }
            guard left > 0 else {
                pass.phase = .evicting
                break
            }
            let removed = try removeChunkDocuments(published: false, limit: 1, in: db)
            if removed.isEmpty { break }
            left -= removed.count
            for chunk in try removed.compactMap({ id in
                try db.first("SELECT \(ChunkRecord.columns) FROM chunk WHERE id = ?", [id], ChunkRecord.init(row:))
            }) {
                let eviction = ChunkEviction(chunk: chunk)
                evictions.append(eviction)
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
                "subsystem": "store", "chunks": "\(removed.joined(separator: ","))", "limitBytes": "\(working.bytes)",
                "limitSetBy": "\(working.bound.rawValue)", "diskRoomBytes": "\(working.diskRoomBytes.map { "\($0)" } ?? "-")",
                "samples": "\(evictions.suffix(removed.count).reduce(0) { $0 + $1.samples })",
            ])
            pass.report.usedBytes = try usedBytes(db)
        }
        if !sessions.isEmpty {
            let now = Date().timeIntervalSince1970
            for (_, session) in sessions.sorted(by: { $0.key < $1.key }) {
                try session.upsert(db)
                for document in sessionDocuments(session) { try write(document, at: now, in: db) }
            }
            pass.report.usedBytes = try usedBytes(db)
        }
        pass.report.evictedUnpublishedChunks += evictions.count
        pass.report.evictions += evictions
        try increment(evictedCounter, by: evictions.count, in: db)
        return evictions
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
