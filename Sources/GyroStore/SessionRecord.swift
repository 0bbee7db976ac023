import FoundationEssentials
import HostTime

/// A capture session: one sensor, one user, from start to end. Its id is the `records`
/// document id, `{userId}___{start epoch seconds}`, assigned once.
public struct SessionRecord: Codable, Sendable, Equatable {
    public var id: String
    public var userId: String
    public var device: String
    public var startMs: Double
    /// `nil` while the session is open.
    public var endMs: Double?
    public var lastSampleMs: Double?
    /// Samples stored, over all streams.
    public var samples: Int64
    /// Samples the sensor should have sent: stored plus missing.
    public var expected: Int64
    public var hazards: [String: Int]
    /// `realtime_data` ids of the gyroscope chunks, in order (the record's `gscope_data`).
    public var chunkIds: [String]
    public var accelChunkIds: [String]
    public var gaps: [GapRange]
    public var isOpen: Bool
    /// The local calendar day (`yyyy-MM-dd`) the session started on, in the gateway's zone.
    public var localDate: String
    /// How its times are dated; `nil` for a session stored by a gateway that did not say.
    public var dating: Dating?

    public init(id: String, userId: String, device: String, startMs: Double, localDate: String) {
        self.id = id
        self.userId = userId
        self.device = device
        self.startMs = startMs
        self.endMs = nil
        self.lastSampleMs = nil
        self.samples = 0
        self.expected = 0
        self.hazards = [:]
        self.chunkIds = []
        self.accelChunkIds = []
        self.gaps = []
        self.isOpen = true
        self.localDate = localDate
        self.dating = nil
    }

    /// Milliseconds from start to end (or to the last sample while open).
    public var durationMs: Double { max(0, (endMs ?? lastSampleMs ?? startMs) - startMs) }
}

/// Rows are written column by column: a session's chunk list grows to thousands of ids and is
/// rewritten at every commit, so it is stored as comma-separated ids instead of going through
/// a generic JSON encoder.
extension SessionRecord {
    /// The columns `init(row:)` reads, in its order.
    static let columns = """
        id, userId, device, startMs, endMs, lastSampleMs, samples, expected, hazards, chunkIds, accelChunkIds, gaps, isOpen, localDate, dating
        """

    init(row: SQLiteRow) throws {
        id = try row.text(0)
        userId = try row.text(1)
        device = try row.text(2)
        startMs = try row.double(3)
        endMs = try row.optionalDouble(4)
        lastSampleMs = try row.optionalDouble(5)
        samples = try row.int64(6)
        expected = try row.int64(7)
        hazards = try JSONColumn.hazards(try row.optionalText(8))
        chunkIds = Self.ids(try row.optionalText(9))
        accelChunkIds = Self.ids(try row.optionalText(10))
        gaps = try JSONColumn.gaps(try row.optionalText(11))
        isOpen = try row.bool(12)
        localDate = try row.text(13)
        dating = try row.optionalText(14).flatMap(Dating.init(rawValue:))
    }

    /// Writes the row, inserting it or replacing every column that can change, through one
    /// cached statement. A session's user, device and start (its id is made of them) are never
    /// rewritten: SQLite rewrites an index entry whose columns an UPDATE sets, even to the same
    /// values, and `userId` and `startMs` are indexed (a page each of WAL at every chunk close).
    func upsert(_ db: SQLiteConnection) throws {
        try db.run("""
            INSERT INTO session (id, userId, device, startMs, endMs, lastSampleMs, samples, expected, hazards,
                                 chunkIds, accelChunkIds, gaps, isOpen, localDate, dating)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET endMs = excluded.endMs, lastSampleMs = excluded.lastSampleMs,
                samples = excluded.samples, expected = excluded.expected, hazards = excluded.hazards,
                chunkIds = excluded.chunkIds, accelChunkIds = excluded.accelChunkIds, gaps = excluded.gaps,
                isOpen = excluded.isOpen, localDate = excluded.localDate, dating = excluded.dating
            """, [
            id, userId, device, startMs, endMs, lastSampleMs, samples, expected,
            JSONColumn.text(hazards), chunkIds.joined(separator: ","),
            accelChunkIds.joined(separator: ","), JSONColumn.text(gaps), isOpen, localDate, dating?.rawValue,
        ])
    }

    static func ids(_ text: String?) -> [String] {
        guard let text, !text.isEmpty else { return [] }
        return text.split(separator: ",").map(String.init)
    }
}
