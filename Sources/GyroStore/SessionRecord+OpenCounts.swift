extension SessionRecord {
    /// The session as its chunks say it is: an open session's row holds its counts as of its
    /// last full write (a chunk's close, a gap), and the samples committed since then are only
    /// in its open chunks.
    ///
    /// Why not keep the row's counts current: they would change at every commit, and with
    /// them a page of the session table; a commit that only appends samples then writes a
    /// single ring page (docs/durability.md).
    ///
    /// Samples: the counts of its closed chunks (a chunk evicted by retention is gone: its
    /// samples are a `storeFull` gap), plus the samples its open chunks hold. Expected: those
    /// samples and every gap's missing ones. Closed sessions are returned as stored.
    func withOpenCounts(_ db: SQLiteConnection) throws -> SessionRecord {
        guard isOpen else { return self }
        var session = self
        let chunks = try db.all("SELECT id, isOpen, count FROM chunk WHERE sessionId = ?", [id]) {
            (id: try $0.text(0), isOpen: try $0.bool(1), count: try $0.int64(2))
        }
        var samples = chunks.reduce(Int64(0)) { $0 + ($1.isOpen ? 0 : $1.count) }
        let open = chunks.filter(\.isOpen)
        if !open.isEmpty {
            let slots = try GyroStore.ringSlots(db)
            for chunk in open {
                let stored = try GyroStore.samples(ofChunk: chunk.id, in: db, slots: slots).samples
                samples += Int64(stored.count)
                if let last = stored.last?.timestampMs { session.lastSampleMs = max(session.lastSampleMs ?? last, last) }
            }
        }
        session.samples = samples
        session.expected = samples + gaps.reduce(Int64(0)) { $0 + $1.missing }
        return session
    }
}
