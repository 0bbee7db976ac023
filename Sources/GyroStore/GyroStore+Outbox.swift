import Foundation
import GRDB

extension GyroStore {
    /// The next unacknowledged publishes after `seq`, oldest first, with copies of their payloads.
    /// (The publisher uses `deliverOutbox`, which copies nothing.)
    public func pendingOutbox(after seq: Int64, limit: Int) async throws(StoreError) -> [OutboxMessage] {
        let (messages, superseded) = try await read("reading the outbox") { db in
            var messages: [OutboxMessage] = []
            let (_, superseded) = try Self.passOutbox(db, after: seq, limit: limit) { row in
                messages.append(OutboxMessage(seq: row.seq, topic: row.topic, qos: row.qos, retain: row.retain, payload: [UInt8](row.payload),
                                              properties: row.properties, device: row.device, createdAt: row.createdAt))
                return true
            }
            return (messages, superseded)
        }
        try await removeSuperseded(superseded)
        return messages
    }

    /// Hands the next unacknowledged publishes after `seq` (at most `limit`), oldest first, to
    /// `deliver`, each as soon as its body is read; `deliver` returns false to stop the pass.
    ///
    /// Why not a page of messages: a chunk body is ~140 KB. Read into an array of its own, each
    /// one was cold memory by the time libmosquitto copied it, and `mqtt-bench --store-bound`
    /// measured a publisher that reads each body into one reused buffer and publishes it at
    /// once at 106-118 µs of CPU per document, against 152-155 for pages of arrays.
    ///
    /// `deliver` runs on the store's reader thread, inside one read transaction (WAL: it does
    /// not hold up writers), and may block there until the broker has room for the row.
    ///
    /// A row whose document has since been rewritten or deleted (or, for a deletion, written
    /// again) is superseded by a later row
    /// for the same path, so it is removed here instead of being delivered: a subscriber never
    /// sees an older version of a document after a newer one. A superseded row stays
    /// superseded (versions only grow).
    public func deliverOutbox(after seq: Int64, limit: Int,
                              _ deliver: @escaping @Sendable (OutboxRowView) -> Bool) async throws(StoreError) -> OutboxPass {
        let (pass, superseded) = try await read("reading the outbox") { db in
            try Self.passOutbox(db, after: seq, limit: limit, deliver)
        }
        try await removeSuperseded(superseded)
        return pass
    }

    /// Superseded rows are deleted in a write of their own, after the read.
    private func removeSuperseded(_ seqs: [Int64]) async throws(StoreError) {
        guard !seqs.isEmpty else { return }
        do { try await removeOutboxRows(seqs) } catch {
            throw .database(context: "removing \(seqs.count) superseded outbox rows", reason: "\(error)")
        }
    }

    private static func passOutbox(_ db: Database, after seq: Int64, limit: Int,
                                   _ visit: (OutboxRowView) throws -> Bool) throws -> (OutboxPass, superseded: [Int64]) {
        let rows = try Row.fetchCursor(db.cachedStatement(sql: outboxPassSQL), arguments: [seq, limit])
        var bodies = BodyReader(db)
        defer { bodies.close() }
        var pass = OutboxPass()
        var superseded: [Int64] = []
        while let row = try rows.next() {
            let seq: Int64 = row[0]
            func view(_ payload: UnsafeRawBufferPointer) -> OutboxRowView {
                OutboxRowView(seq: seq, topic: row[1], qos: row[2], retain: row[3], properties: row[4], device: row[5],
                              createdAt: row[6], payload: payload)
            }
            let accepted: Bool
            let documentPath: String? = row[12]
            if row[8] as Int64? == nil, documentPath != nil, row[9] as Int64? != nil {
                // A deletion whose path holds a document again (written after it, e.g. a session
                // id reused after an empty session was withdrawn): the later write wins.
                superseded.append(seq)
                pass.lastSeq = seq
                continue
            }
            if let version: Int64 = row[8] {
                let current: Int64? = row[9]
                guard current == version else {
                    superseded.append(seq)
                    pass.lastSeq = seq
                    continue
                }
                accepted = try bodies.withBody(rowid: row[10], length: row[11]) { try visit(view($0)) }
            } else {
                accepted = try row.withUnsafeData(atIndex: 7) { data in
                    try (data ?? Data()).withUnsafeBytes { try visit(view($0)) }
                }
            }
            guard accepted else {
                pass.stopped = true
                break
            }
            pass.delivered += 1
            pass.lastSeq = seq
        }
        return (pass, superseded)
    }

    /// The document's rowid and length rather than its body: bodies are read straight from
    /// SQLite's pages (`BodyReader`) instead of SQLite assembling a copy that is copied again.
    /// The version comes from `document_path_version` (migration v4), which SQLite's planner
    /// would not pick by itself: from the table row it costs a walk of the body's overflow
    /// chain, and the length only the row's header.
    static let outboxPassSQL = """
        SELECT o.seq, o.topic, o.qos, o.retain, o.properties, o.device, o.createdAt, o.payload,
               o.documentVersion, d.version AS currentVersion, d.rowid, length(d.body), o.documentPath
        FROM outbox o LEFT JOIN document d INDEXED BY document_path_version ON d.path = o.documentPath
        WHERE o.seq > ? AND o.parkedAt IS NULL ORDER BY o.seq LIMIT ?
        """

    /// The broker acknowledged these rows: they are done.
    public func acknowledge(_ seqs: [Int64]) async throws(StoreError) {
        guard !seqs.isEmpty else { return }
        do { try await removeOutboxRows(seqs) } catch {
            throw .database(context: "removing \(seqs.count) acknowledged outbox rows", reason: "\(error)")
        }
    }

    /// Deletes outbox rows without waiting for the disk (`synchronous = NORMAL` for this one
    /// commit): if the power goes before a later commit syncs the WAL, the rows come back and
    /// are published again, which at-least-once delivery allows. Syncing each batch of
    /// acknowledgements cost the publisher ~40 µs of CPU per chunk document in `mqtt-bench`.
    /// WAL frames are written in order, so no later commit can survive without this one.
    private func removeOutboxRows(_ seqs: [Int64]) async throws {
        try await writer.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            let deleted = Result { try db.inTransaction { try Self.deleteOutbox(seqs, in: db); return .commit } }
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try deleted.get()
        }
    }

    static func deleteOutbox(_ seqs: [Int64], in db: Database) throws {
        let statement = try db.cachedStatement(sql: "DELETE FROM outbox WHERE seq = ?")
        for seq in seqs { try statement.execute(arguments: [seq]) }
    }

    public func outboxStats() async throws(StoreError) -> OutboxStats {
        try await read("measuring the outbox") { db in
            let row = try Row.fetchOne(db, sql: """
                SELECT COUNT(*) AS depth, COALESCE(SUM(bytes), 0) AS bytes, MIN(createdAt) AS oldest,
                       COUNT(parkedAt) AS parked, MAX(parkedAt) AS lastParked
                FROM outbox
                """)
            var stats = OutboxStats(depth: row?["depth"] ?? 0, bytes: row?["bytes"] ?? 0, oldestCreatedAt: row?["oldest"])
            stats.parked = row?["parked"] ?? 0
            if stats.parked > 0 {
                stats.lastParkedReason = try String.fetchOne(db, sql: "SELECT parkedReason FROM outbox WHERE parkedAt IS NOT NULL ORDER BY parkedAt DESC, seq DESC LIMIT 1")
            }
            return stats
        }
    }

    /// The broker refused these rows (a PUBACK reason >= 128). A row refused `parkAfter` times
    /// is parked: kept with the broker's reason, no longer sent, until `retryParked()`.
    /// Returns the rows parked by this call.
    public func recordRefusals(_ refusals: [(seq: Int64, reason: String)], parkAfter: Int) async throws(StoreError) -> [Int64] {
        guard !refusals.isEmpty else { return [] }
        let now = Date().timeIntervalSince1970
        do {
            return try await writer.write { db in
                var parked: [Int64] = []
                for refusal in refusals {
                    try db.execute(sql: "UPDATE outbox SET refusals = refusals + 1 WHERE seq = ?", arguments: [refusal.seq])
                    try db.execute(sql: """
                        UPDATE outbox SET parkedAt = ?, parkedReason = ? WHERE seq = ? AND refusals >= ? AND parkedAt IS NULL
                        """, arguments: [now, refusal.reason, refusal.seq, parkAfter])
                    if db.changesCount > 0 { parked.append(refusal.seq) }
                }
                return parked
            }
        } catch {
            throw .database(context: "recording \(refusals.count) refused publishes", reason: "\(error)")
        }
    }

    /// Makes parked rows eligible again (after the broker's ACL or quota was fixed); returns
    /// how many, and the lowest seq among them (delivery must read again from there).
    public func retryParked() async throws(StoreError) -> (count: Int, firstSeq: Int64?) {
        do {
            return try await writer.write { db in
                let first = try Int64.fetchOne(db, sql: "SELECT MIN(seq) FROM outbox WHERE parkedAt IS NOT NULL")
                try db.execute(sql: "UPDATE outbox SET parkedAt = NULL, parkedReason = NULL, refusals = 0 WHERE parkedAt IS NOT NULL")
                return (db.changesCount, first)
            }
        } catch {
            throw .database(context: "retrying parked outbox rows", reason: "\(error)")
        }
    }

    /// Every retained document as it is now, for re-asserting them after a broker lost its
    /// retained store (`seq` is 0: these are not outbox rows).
    public func retainedDocuments() async throws(StoreError) -> [OutboxMessage] {
        try await read("listing retained documents") { db in
            try Row.fetchAll(db, sql: Self.retainedDocumentsSQL).map { row in
                let body: Data = row["body"]
                return OutboxMessage(seq: 0, topic: row["path"], qos: 1, retain: true, payload: [UInt8](body),
                                     properties: nil, device: nil, createdAt: row["updatedAt"])
            }
        }
    }

    /// Served by the partial index `document_retained_path` (migration v3), not a table scan.
    static let retainedDocumentsSQL = "SELECT path, body, updatedAt FROM document WHERE retained = 1 ORDER BY path"

    /// SQLite's plan for a query, one line per step (for tests).
    func queryPlan(_ sql: String, arguments: StatementArguments = []) async throws(StoreError) -> [String] {
        try await read("explaining a query") { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
        }
    }
}
