/// One `realtime_data` document's bookkeeping. While open, its samples live in the
/// `SampleRing` (or, in a store from before the ring, `sampleBatch` rows); when closed, in
/// the document body.
public struct ChunkRecord: Codable, Sendable, Equatable {
    public var id: String
    public var sessionId: String
    /// `gyro` or `accelerometer`.
    public var stream: String
    /// Position among the session's chunks of this stream, from 0.
    public var seq: Int
    public var odrHz: Double
    /// dps for the gyroscope, g for the accelerometer.
    public var range: Double
    /// Stream sample index of the chunk's first sample.
    public var firstIndex: Int64
    public var count: Int
    public var startMs: Double?
    public var endMs: Double?
    public var gaps: [GapRange]
    public var isOpen: Bool
    /// Its document was removed by retention: after it had been published, or evicted
    /// unpublished from a full store (then its samples are a `storeFull` gap of the session).
    public var pruned: Bool

    public init(id: String, sessionId: String, stream: String, seq: Int, odrHz: Double, range: Double, firstIndex: Int64) {
        self.id = id
        self.sessionId = sessionId
        self.stream = stream
        self.seq = seq
        self.odrHz = odrHz
        self.range = range
        self.firstIndex = firstIndex
        self.count = 0
        self.startMs = nil
        self.endMs = nil
        self.gaps = []
        self.isOpen = true
        self.pruned = false
    }
}

extension ChunkRecord {
    /// The columns `init(row:)` reads, in its order.
    static let columns = "id, sessionId, stream, seq, odrHz, range, firstIndex, count, startMs, endMs, gaps, isOpen, pruned"

    init(row: SQLiteRow) throws {
        id = try row.text(0)
        sessionId = try row.text(1)
        stream = try row.text(2)
        seq = try row.int(3)
        odrHz = try row.double(4)
        range = try row.double(5)
        firstIndex = try row.int64(6)
        count = try row.int(7)
        startMs = try row.optionalDouble(8)
        endMs = try row.optionalDouble(9)
        gaps = try JSONColumn.gaps(try row.optionalText(10))
        isOpen = try row.bool(11)
        pruned = try row.bool(12)
    }

    /// Writes the row through one cached statement; its session, stream, sequence, rate and range,
    /// fixed when it opens, are not rewritten (`chunk_on_sessionId` would be; see
    /// ``SessionRecord/upsert(_:)``).
    func upsert(_ db: SQLiteConnection) throws {
        try db.run("""
            INSERT INTO chunk (id, sessionId, stream, seq, odrHz, range, firstIndex, count, startMs, endMs, gaps, isOpen, pruned)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET firstIndex = excluded.firstIndex, count = excluded.count,
                startMs = excluded.startMs, endMs = excluded.endMs, gaps = excluded.gaps, isOpen = excluded.isOpen,
                pruned = excluded.pruned
            """, [
            id, sessionId, stream, seq, odrHz, range, firstIndex, count, startMs, endMs,
            JSONColumn.text(gaps), isOpen, pruned,
        ])
    }
}
