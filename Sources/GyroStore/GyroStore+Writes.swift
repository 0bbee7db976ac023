import FoundationEssentials

extension GyroStore {
    /// Applies one unit of work in a single transaction: when this returns, every sample and
    /// document in `changes` is on disk, and each document has its outbox row.
    nonisolated(nonsending)
    public func commit(_ changes: StoreChanges) async throws(StoreError) {
        guard !changes.isEmpty else { return }
        do {
            try await writeWithRing { db, ring in try Self.apply(changes, in: db, ring: &ring) }
        } catch {
            throw .wrapping(error, context: "committing \(changes.sampleCount) samples and \(changes.documents.count) documents")
        }
    }

    static func apply(_ changes: StoreChanges, in db: SQLiteConnection, ring: inout SampleRing) throws {
        for reset in changes.resetTimes {
            try db.run("INSERT INTO boardResetTime (device, resetUID, resetTime) VALUES (?, ?, ?) "
                       + "ON CONFLICT(device, resetUID) DO UPDATE SET resetTime = excluded.resetTime",
                       [reset.device, Int(reset.resetUID), reset.resetTime])
        }
        for session in changes.sessions { try session.upsert(db) }
        for lists in changes.inherited {
            try db.run("INSERT OR REPLACE INTO sessionInherited (sessionId, gyro, accel) VALUES (?, ?, ?)",
                       [lists.sessionId, lists.gyro.joined(separator: ","), lists.accelerometer.joined(separator: ",")])
            for carried in lists.carried where carried.chunk.sessionId == lists.sessionId { try carried.store(in: db) }
        }
        // After the renamed sessions' new rows (a chunk must name an existing session), before
        // the old rows go (deleting a session deletes its chunks).
        for rename in changes.renames {
            try db.run("UPDATE chunk SET sessionId = ? WHERE sessionId = ?", [rename.to, rename.from])
            try db.run("UPDATE sessionInherited SET sessionId = ? WHERE sessionId = ?", [rename.to, rename.from])
            try db.run("DELETE FROM session WHERE id = ?", [rename.from])
        }
        for chunk in changes.chunks { try chunk.upsert(db) }
        try ring.write(changes.samples, in: db)
        // Chunks of a store written before the ring kept their samples in rows.
        for chunkId in changes.closedChunkIds {
            try db.run("DELETE FROM sampleBatch WHERE chunkId = ?", [chunkId])
        }
        let now = Date().timeIntervalSince1970
        for document in changes.documents { try write(document, at: now, in: db) }
        for path in changes.deletions { try delete(path, at: now, in: db) }
        for id in changes.deletedSessionIds {
            try db.run("DELETE FROM session WHERE id = ?", [id])
        }
    }

    static func write(_ document: DocumentWrite, at now: Double, in db: SQLiteConnection) throws {
        let version = try db.first("""
            INSERT INTO document (path, collection, body, version, retained, updatedAt) VALUES (?, ?, ?, 1, ?, ?)
            ON CONFLICT(path) DO UPDATE SET body = excluded.body, version = version + 1,
                retained = excluded.retained, updatedAt = excluded.updatedAt
            RETURNING version
            """, [document.path.rawValue, document.path.collection, document.body, document.retain, now]) { try $0.int64(0) } ?? 1
        try db.run("""
            INSERT INTO outbox (topic, qos, retain, documentPath, documentVersion, payload, bytes, device, createdAt)
            VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?)
            """, [document.path.rawValue, document.qos, document.retain, document.path.rawValue,
                  version, document.body.count, document.device, now])
    }

    /// A deleted document is a zero-byte retained publish, the MQTT way of clearing a retained topic.
    static func delete(_ path: DocumentPath, at now: Double, in db: SQLiteConnection) throws {
        try db.run("DELETE FROM document WHERE path = ?", [path.rawValue])
        try db.run("""
            INSERT INTO outbox (topic, qos, retain, documentPath, documentVersion, payload, bytes, device, createdAt)
            VALUES (?, 1, 1, ?, NULL, x'', 0, NULL, ?)
            """, [path.rawValue, path.rawValue, now])
    }

    static func increment(_ counter: String, by amount: Int, in db: SQLiteConnection) throws {
        try db.run("""
            INSERT INTO counter (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = value + excluded.value
            """, [counter, amount])
    }
}
