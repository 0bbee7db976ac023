import CSQLite

extension GyroStore {
    /// The JSON body of one document, or `nil`.
    public func document(_ path: DocumentPath) async throws(StoreError) -> [UInt8]? {
        try await read("reading \(path)") { db in
            try db.first("SELECT body FROM document WHERE path = ?", [path.rawValue]) { try Self.json(try $0.bytes(0), path: path.rawValue) }
        }
    }

    /// A stored body as its JSON document (a compact chunk body rendered, ``ChunkBody``).
    static func json(_ body: [UInt8], path: String) throws -> [UInt8] {
        guard let json = ChunkBody.json(body) else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "document \(path): its chunk body is damaged")
        }
        return json
    }

    /// The ids of the documents directly in a collection, sorted.
    public func documentIds(inCollection collection: String) async throws(StoreError) -> [String] {
        try await read("listing \(collection)") { db in
            try db.all("SELECT path FROM document WHERE collection = ? ORDER BY path", [collection]) { try $0.text(0) }
                .map { String($0.dropFirst(collection.count + 1)) }
        }
    }

    public func session(id: String) async throws(StoreError) -> SessionRecord? {
        try await read("reading session \(id)") { db in
            try SessionRecord.read(db, "WHERE id = ?", [id], lists: true).first
        }
    }

    /// Sessions that started in `[fromMs, toMs)`, optionally of one user, oldest first. Without
    /// `chunkLists` they are summaries: `chunkIds` and `accelChunkIds` empty, `chunkCount` right
    /// (what a listing of months needs, without reading thousands of chunk rows a session).
    public func sessions(startingFrom fromMs: Double = -.infinity, before toMs: Double = .infinity, userId: String? = nil,
                         chunkLists: Bool = true) async throws(StoreError) -> [SessionRecord] {
        try await read("listing sessions") { db in
            if let userId {
                try SessionRecord.read(db, "WHERE startMs >= ? AND startMs < ? AND userId = ? ORDER BY startMs", [fromMs, toMs, userId],
                                       lists: chunkLists)
            } else {
                try SessionRecord.read(db, "WHERE startMs >= ? AND startMs < ? ORDER BY startMs", [fromMs, toMs], lists: chunkLists)
            }
        }
    }

    public func openSessions() async throws(StoreError) -> [SessionRecord] {
        try await readRows("listing open sessions") { db in
            try SessionRecord.read(db, "WHERE isOpen = 1 ORDER BY startMs", lists: true)
        }
    }

    public func openChunks(sessionId: String) async throws(StoreError) -> [ChunkRecord] {
        try await readRows("listing open chunks") { db in
            try db.all("SELECT \(ChunkRecord.columns) FROM chunk WHERE sessionId = ? AND isOpen = 1 ORDER BY stream, seq",
                       [sessionId], ChunkRecord.init(row:))
        }
    }

    public func chunks(sessionId: String) async throws(StoreError) -> [ChunkRecord] {
        try await readRows("listing chunks") { db in
            try db.all("SELECT \(ChunkRecord.columns) FROM chunk WHERE sessionId = ? ORDER BY stream, seq", [sessionId], ChunkRecord.init(row:))
        }
    }

    /// The stored samples of an open chunk, in order: rows an older gateway wrote, then what
    /// the sample ring holds after them.
    public func samples(ofChunk chunkId: String) async throws(StoreError) -> [StoredSample] {
        let (samples, damaged) = try await readRows("reading samples of \(chunkId)") { db in
            try Self.samples(ofChunk: chunkId, in: db, slots: try Self.ringSlots(db))
        }
        if damaged > 0 { logDamagedRing(chunk: chunkId, slots: damaged) }
        return samples
    }

    static func ringSlots(_ db: SQLiteConnection) throws -> [[UInt8]] {
        try db.all("SELECT data FROM sampleRing ORDER BY slot") { try $0.bytes(0) }
    }

    /// An open chunk's samples and how many ring slots did not decode.
    static func samples(ofChunk chunkId: String, in db: SQLiteConnection, slots: [[UInt8]]) throws -> (samples: [StoredSample], damaged: Int) {
        var samples: [StoredSample] = []
        for blob in try db.all("SELECT data FROM sampleBatch WHERE chunkId = ? ORDER BY offset", [chunkId], { try $0.bytes(0) })
        where !SampleBlob.decode(blob, into: &samples) {
            throw StoreError.damagedSamples(chunk: chunkId, reason: "a blob of \(blob.count) bytes is not a whole number of samples")
        }
        let (ringSamples, damaged) = SampleRing.samples(ofChunk: chunkId, from: slots, startingAt: samples.count)
        return (samples + ringSamples, damaged)
    }

    func logDamagedRing(chunk: String, slots: Int) {
        logger.error("slots of the sample ring do not decode; a chunk is read up to its first missing sample", metadata: [
            "subsystem": "store", "chunk": "\(chunk)", "damagedSlots": "\(slots)",
        ])
    }

    public func counter(_ name: String) async throws(StoreError) -> Int {
        try await read("reading counter") { db in try db.first("SELECT value FROM counter WHERE name = ?", [name]) { try $0.int(0) } ?? 0 }
    }

    /// `PRAGMA integrity_check`: "ok" or SQLite's list of problems.
    public func integrityCheck() async throws(StoreError) -> String {
        try await read("checking integrity") { db in try db.all("PRAGMA integrity_check") { try $0.text(0) }.joined(separator: "; ") }
    }

    /// Bytes in use by live pages (what retention bounds), the sample ring's left out: its
    /// slots are a fixed part of the file that pruning cannot shrink.
    public func usedBytes() async throws(StoreError) -> Int {
        try await read("measuring the store") { db in try Self.usedBytes(db) }
    }

    static func usedBytes(_ db: SQLiteConnection) throws -> Int {
        let pages = try db.first("PRAGMA page_count") { try $0.int(0) } ?? 0
        let free = try db.first("PRAGMA freelist_count") { try $0.int(0) } ?? 0
        let size = try db.first("PRAGMA page_size") { try $0.int(0) } ?? 4096
        return max(0, (pages - free) * size - (try ringBytes(db, pageSize: size)))
    }

    /// Bytes of the file the sample ring's slots take: a fixed part that pruning cannot shrink.
    static func ringBytes(_ db: SQLiteConnection, pageSize: Int? = nil) throws -> Int {
        let size = try pageSize ?? db.first("PRAGMA page_size") { try $0.int(0) } ?? 4096
        let slots = try db.first("SELECT count(*) FROM sampleRing") { try $0.int(0) } ?? 0
        return slots * RingSlot.pagesBytes(pageSize: size)
    }
}
