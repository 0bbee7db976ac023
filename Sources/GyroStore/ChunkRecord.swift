import GRDB

/// One `realtime_data` document's bookkeeping. While open, its samples live in `sampleBatch`
/// rows; when closed, in the document body.
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

extension ChunkRecord: FetchableRecord, PersistableRecord {
    public static let databaseTableName = "chunk"

    public init(row: Row) throws {
        id = row["id"]
        sessionId = row["sessionId"]
        stream = row["stream"]
        seq = row["seq"]
        odrHz = row["odrHz"]
        range = row["range"]
        firstIndex = row["firstIndex"]
        count = row["count"]
        startMs = row["startMs"]
        endMs = row["endMs"]
        gaps = try JSONColumn.decode([GapRange].self, row["gaps"])
        isOpen = row["isOpen"]
        pruned = row["pruned"]
    }

    /// Writes the row through one cached statement (see ``SessionRecord/upsert(_:)``).
    func upsert(_ db: Database) throws {
        let statement = try db.cachedStatement(sql: """
            INSERT INTO chunk (id, sessionId, stream, seq, odrHz, range, firstIndex, count, startMs, endMs, gaps, isOpen, pruned)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET sessionId = excluded.sessionId, stream = excluded.stream, seq = excluded.seq,
                odrHz = excluded.odrHz, range = excluded.range, firstIndex = excluded.firstIndex, count = excluded.count,
                startMs = excluded.startMs, endMs = excluded.endMs, gaps = excluded.gaps, isOpen = excluded.isOpen,
                pruned = excluded.pruned
            """)
        try statement.execute(arguments: [
            id, sessionId, stream, seq, odrHz, range, firstIndex, count, startMs, endMs,
            gaps.isEmpty ? "[]" : try JSONColumn.encode(gaps), isOpen, pruned,
        ])
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["sessionId"] = sessionId
        container["stream"] = stream
        container["seq"] = seq
        container["odrHz"] = odrHz
        container["range"] = range
        container["firstIndex"] = firstIndex
        container["count"] = count
        container["startMs"] = startMs
        container["endMs"] = endMs
        container["gaps"] = gaps.isEmpty ? "[]" : try JSONColumn.encode(gaps)
        container["isOpen"] = isOpen
        container["pruned"] = pruned
    }
}
