import FoundationEssentials

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
    /// one was cold memory by the time libmosquitto copied it; a publisher that reads each body
    /// into one reused buffer and publishes it at once costs clearly less CPU per document
    /// (`mqtt-bench --store-bound`, docs/benchmarks.md).
    ///
    /// `deliver` runs on the store's reader thread, inside one read transaction (WAL: it does
    /// not hold up writers), and may block there until the broker has room for the row.
    ///
    /// A row whose document has since been rewritten or deleted (or, for a deletion, written
    /// again) is superseded by a later row
    /// for the same path, so it is removed here instead of being delivered: a subscriber never
    /// sees an older version of a document after a newer one. A superseded row stays
    /// superseded (versions only grow).
    nonisolated(nonsending)
    public func deliverOutbox(after seq: Int64, limit: Int,
                              _ deliver: @escaping @Sendable (OutboxRowView) -> Bool) async throws(StoreError) -> OutboxPass {
        let (pass, superseded) = try await read("reading the outbox") { db in
            try Self.passOutbox(db, after: seq, limit: limit, deliver)
        }
        try await removeSuperseded(superseded)
        return pass
    }

    /// Superseded rows are deleted in a write of their own, after the read.
    nonisolated(nonsending)
    private func removeSuperseded(_ seqs: [Int64]) async throws(StoreError) {
        guard !seqs.isEmpty else { return }
        do { try await removeOutboxRows(seqs) } catch {
            throw .database(context: "removing \(seqs.count) superseded outbox rows", reason: "\(error)")
        }
    }

    private static func passOutbox(_ db: SQLiteConnection, after seq: Int64, limit: Int,
                                   _ visit: (OutboxRowView) throws -> Bool) throws -> (OutboxPass, superseded: [Int64]) {
        var bodies = BodyReader(db)
        defer { bodies.close() }
        var pass = OutboxPass()
        var superseded: [Int64] = []
        var rows = 0
        try db.statement(outboxPassSQL).forEachRow([seq, limit]) { row in
            rows += 1
            let seq = try row.int64(0)
            let topic = try row.text(1), qos = try row.int(2), retain = try row.bool(3), properties = try row.optionalText(4)
            let device = try row.optionalText(5), createdAt = try row.double(6)
            func view(_ payload: UnsafeRawBufferPointer) -> OutboxRowView {
                OutboxRowView(seq: seq, topic: topic, qos: qos, retain: retain, properties: properties, device: device,
                              createdAt: createdAt, payload: payload)
            }
            let version = try row.optionalInt64(8), current = try row.optionalInt64(9)
            if version == nil, try row.optionalText(12) != nil, current != nil {
                // A deletion whose path holds a document again (written after it, e.g. a session
                // id reused after an empty session was withdrawn): the later write wins.
                superseded.append(seq)
                pass.lastSeq = seq
                return true
            }
            let accepted: Bool
            if let version {
                guard current == version else {
                    superseded.append(seq)
                    pass.lastSeq = seq
                    return true
                }
                accepted = try bodies.withBody(rowid: try row.int64(10), length: try row.int(11)) { try visit(view($0)) }
            } else {
                accepted = try row.withBytes(7) { try visit(view($0)) }
            }
            guard accepted else {
                pass.stopped = true
                return false
            }
            pass.delivered += 1
            pass.lastSeq = seq
            return true
        }
        pass.limited = !pass.stopped && rows >= limit
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
    nonisolated(nonsending)
    public func acknowledge(_ seqs: [Int64]) async throws(StoreError) {
        guard !seqs.isEmpty else { return }
        do { try await removeOutboxRows(seqs) } catch {
            throw .database(context: "removing \(seqs.count) acknowledged outbox rows", reason: "\(error)")
        }
    }

    /// Deletes outbox rows without waiting for the disk (`synchronous = NORMAL` for this one
    /// commit): if the power goes before a later commit syncs the WAL, the rows come back and
    /// are published again, which at-least-once delivery allows. Syncing each batch of
    /// acknowledgements cost the publisher CPU on every chunk document (docs/benchmarks.md).
    /// WAL frames are written in order, so no later commit can survive without this one.
    nonisolated(nonsending)
    private func removeOutboxRows(_ seqs: [Int64]) async throws {
        try await writeWithoutTransaction { db in
            try db.run("PRAGMA synchronous = NORMAL")
            let deleted = Result { try db.transaction(.immediate) { try Self.deleteOutbox(seqs, in: db) } }
            try db.run("PRAGMA synchronous = FULL")
            try deleted.get()
        }
    }

    static func deleteOutbox(_ seqs: [Int64], in db: SQLiteConnection) throws {
        let statement = try db.statement("DELETE FROM outbox WHERE seq = ?")
        for seq in seqs { try statement.execute([seq]) }
    }

    /// The highest seq of the rows the publisher will send (not parked); nil when there are none.
    public func lastDeliverableSeq() async throws(StoreError) -> Int64? {
        try await read("reading the outbox's last row") { db in
            try db.first("SELECT seq FROM outbox WHERE parkedAt IS NULL ORDER BY seq DESC LIMIT 1") { try $0.int64(0) }
        }
    }

    public func outboxStats() async throws(StoreError) -> OutboxStats {
        try await read("measuring the outbox") { db in
            var stats = try db.first("SELECT COUNT(*), COALESCE(SUM(bytes), 0), MIN(createdAt), COUNT(parkedAt) FROM outbox") { row in
                var stats = OutboxStats(depth: try row.int(0), bytes: try row.int(1), oldestCreatedAt: try row.optionalDouble(2))
                stats.parked = try row.int(3)
                return stats
            } ?? OutboxStats(depth: 0, bytes: 0, oldestCreatedAt: nil)
            if stats.parked > 0 {
                stats.lastParkedReason = try db.first(
                    "SELECT parkedReason FROM outbox WHERE parkedAt IS NOT NULL ORDER BY parkedAt DESC, seq DESC LIMIT 1"
                ) { try $0.optionalText(0) } ?? nil
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
            return try await write { db in
                var parked: [Int64] = []
                for refusal in refusals {
                    try db.run("UPDATE outbox SET refusals = refusals + 1 WHERE seq = ?", [refusal.seq])
                    try db.run("""
                        UPDATE outbox SET parkedAt = ?, parkedReason = ? WHERE seq = ? AND refusals >= ? AND parkedAt IS NULL
                        """, [now, refusal.reason, refusal.seq, parkAfter])
                    if db.changes > 0 { parked.append(refusal.seq) }
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
            return try await write { db in
                let first = try db.first("SELECT MIN(seq) FROM outbox WHERE parkedAt IS NOT NULL") { try $0.optionalInt64(0) } ?? nil
                try db.run("UPDATE outbox SET parkedAt = NULL, parkedReason = NULL, refusals = 0 WHERE parkedAt IS NOT NULL")
                return (db.changes, first)
            }
        } catch {
            throw .database(context: "retrying parked outbox rows", reason: "\(error)")
        }
    }

    /// Every retained document as it is now, for re-asserting them after a broker lost its
    /// retained store (`seq` is 0: these are not outbox rows).
    public func retainedDocuments() async throws(StoreError) -> [OutboxMessage] {
        try await read("listing retained documents") { db in
            try db.all(Self.retainedDocumentsSQL) { row in
                OutboxMessage(seq: 0, topic: try row.text(0), qos: 1, retain: true, payload: try Self.json(try row.bytes(1), path: try row.text(0)),
                              properties: nil, device: nil, createdAt: try row.double(2))
            }
        }
    }

    /// Served by the partial index `document_retained_path` (migration v3), not a table scan.
    static let retainedDocumentsSQL = "SELECT path, body, updatedAt FROM document WHERE retained = 1 ORDER BY path"

    /// SQLite's plan for a query, one line per step (for tests).
    func queryPlan(_ sql: String, arguments: [any SQLiteBindable & Sendable] = []) async throws(StoreError) -> [String] {
        try await read("explaining a query") { db in
            // Uncached: a plan is asked for once.
            try SQLiteStatement(sql: "EXPLAIN QUERY PLAN " + sql, connection: db.handle).all(arguments) { try $0.text(3) }
        }
    }
}
