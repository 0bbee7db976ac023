import HostTime

/// A session's row: what it says about the session, except its chunk lists, which the chunk
/// table holds (a chunk row names its session), so that writing a session costs the same at its
/// first chunk and at its three-thousandth.
///
/// Why: the row is rewritten at every chunk close (its counts, gaps and end move), and with the
/// lists in it (about 37 bytes a chunk) a session's writes grew with the square of its length
/// (docs/durability.md, "Session age"). The row keeps the count of its listed chunks, so that a
/// listing of months of sessions reads no chunk rows.
///
/// A listed chunk is a closed chunk of the session: one whose document retention pruned after
/// publication stays listed (its document existed downstream); one evicted unpublished is
/// deleted, its samples a `storeFull` gap of the session (``ChunkEviction``). The lists are in
/// order of the chunks' first samples, which is the order capture closes them in and where a
/// backfill's new chunks belong.
extension SessionRecord {
    /// The columns `init(row:)` reads, in its order.
    static let columns = """
        id, userId, device, startMs, endMs, lastSampleMs, samples, expected, hazards, chunks, gaps, isOpen, localDate, dating
        """

    /// The row alone: its lists are empty and ``chunkCount`` is the stored count (a summary).
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
        chunkIds = []
        accelChunkIds = []
        unreadChunks = try row.int(9)
        gaps = try JSONColumn.gaps(try row.optionalText(10))
        isOpen = try row.bool(11)
        localDate = try row.text(12)
        dating = try row.optionalText(13).flatMap(Dating.init(rawValue:))
    }

    /// Sessions of a query on `session` (`whereClause` follows `FROM session`), each with its
    /// open counts (``withOpenCounts(_:)``) and, with `lists`, its chunk lists.
    static func read(_ db: SQLiteConnection, _ whereClause: String, _ arguments: [any SQLiteBindable] = [],
                     lists: Bool) throws -> [SessionRecord] {
        try db.all("SELECT \(columns) FROM session \(whereClause)", arguments, SessionRecord.init(row:)).map { row in
            var session = try row.withOpenCounts(db)
            if lists { try session.readChunkLists(db) }
            return session
        }
    }

    /// Fills `chunkIds` and `accelChunkIds` from the chunk table.
    mutating func readChunkLists(_ db: SQLiteConnection) throws {
        let chunks = try db.all("SELECT id, stream FROM chunk WHERE sessionId = ? AND isOpen = 0 ORDER BY startMs, seq, id", [id]) {
            (id: try $0.text(0), stream: try $0.text(1))
        }
        chunkIds = chunks.filter { $0.stream != "accelerometer" }.map(\.id)
        accelChunkIds = chunks.filter { $0.stream == "accelerometer" }.map(\.id)
        unreadChunks = 0
        // A session adopted from another gateway lists that gateway's chunks first; those of its
        // own that were among them (it held the session before) are listed once, in place.
        if let inherited = try db.first("SELECT gyro, accel FROM sessionInherited WHERE sessionId = ?", [id], {
            (try $0.text(0), try $0.text(1))
        }) {
            func merged(_ text: String, _ own: [String]) -> [String] {
                let before = text.split(separator: ",").map(String.init)
                let listed = Set(before)
                return before + own.filter { !listed.contains($0) }
            }
            chunkIds = merged(inherited.0, chunkIds)
            accelChunkIds = merged(inherited.1, accelChunkIds)
        }
    }

    /// New chunks a backfill made beside a chunk of the inherited part (one another gateway
    /// wrote, carried here with its gap: ``CarriedChunk``) are listed there too, beside it, so
    /// that the lists stay in order of the chunks' first samples.
    static func listInherited(_ change: BackfillReport.GapChange, sessionId: String, _ db: SQLiteConnection) throws {
        let column = change.gap.stream == "gyro" ? "gyro" : "accel"
        guard let text = try db.first("SELECT \(column) FROM sessionInherited WHERE sessionId = ?", [sessionId], { try $0.text(0) })
        else { return }
        var ids = text.split(separator: ",").map(String.init)
        guard let at = ids.firstIndex(of: change.nextTo) else { return }
        ids.insert(contentsOf: change.newChunkIds, at: change.after ? at + 1 : at)
        try db.run("UPDATE sessionInherited SET \(column) = ? WHERE sessionId = ?", [ids.joined(separator: ","), sessionId])
    }

    /// Writes the row, inserting it or replacing every column that can change, through one
    /// cached statement. A session's user, device and start (its id is made of them) are never
    /// rewritten: SQLite rewrites an index entry whose columns an UPDATE sets, even to the same
    /// values, and `userId` and `startMs` are indexed (a page each of WAL at every chunk close).
    /// `chunkIds` and `accelChunkIds`, columns of the first schema, stay empty.
    func upsert(_ db: SQLiteConnection) throws {
        try db.run("""
            INSERT INTO session (id, userId, device, startMs, endMs, lastSampleMs, samples, expected, hazards,
                                 chunkIds, accelChunkIds, chunks, gaps, isOpen, localDate, dating)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '', '', ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET endMs = excluded.endMs, lastSampleMs = excluded.lastSampleMs,
                samples = excluded.samples, expected = excluded.expected, hazards = excluded.hazards,
                chunks = excluded.chunks, gaps = excluded.gaps,
                isOpen = excluded.isOpen, localDate = excluded.localDate, dating = excluded.dating
            """, [
            id, userId, device, startMs, endMs, lastSampleMs, samples, expected,
            JSONColumn.text(hazards), chunkCount, JSONColumn.text(gaps), isOpen, localDate, dating?.rawValue,
        ])
    }
}
