import FoundationEssentials

/// A closed chunk of a session that moves to another gateway of a fleet, with its document as
/// the releasing gateway stored it, because it lists a gap that a backfill could still fill.
///
/// Why: a gap is filled in the chunk that lists it (``GyroStore/backfill(device:stream:samples:chunkSize:sessionDocuments:chunkDocument:newChunk:newChunkDocument:)``),
/// and a session's next gateway has none of the chunks its earlier gateways wrote. A board whose
/// link ended during its log's download (a move within seconds of the last) keeps the entries
/// for that gap, but no gateway could place them: the releasing one writes the session no more,
/// the next one lacked the chunk. With the chunk carried, the next gateway's backfill fills the
/// gap and publishes the chunk's next version, as the session's one writer.
public struct CarriedChunk: Sendable, Equatable {
    public var chunk: ChunkRecord
    /// The stored body (``ChunkBody``'s compact form, or JSON).
    public var body: [UInt8]
    public var retained: Bool

    public init(chunk: ChunkRecord, body: [UInt8], retained: Bool) {
        (self.chunk, self.body, self.retained) = (chunk, body, retained)
    }

    /// The chunk's row and its document, without an outbox row: the releasing gateway published
    /// it before it handed the session over. A body this build cannot read is left out, so that
    /// a backfill never meets it (it would refuse the whole download).
    func store(in db: SQLiteConnection) throws {
        guard !chunk.isOpen, !chunk.pruned, ChunkBody.json(body) != nil else { return }
        try chunk.upsert(db)
        let path = try DocumentPath.chunk(chunk.id)
        try db.run("""
            INSERT INTO document (path, collection, body, version, retained, updatedAt) VALUES (?, ?, ?, 1, ?, ?)
            ON CONFLICT(path) DO UPDATE SET body = excluded.body, retained = excluded.retained, updatedAt = excluded.updatedAt
            """, [path.rawValue, path.collection, body, retained, Date().timeIntervalSince1970])
    }
}

extension GyroStore {
    /// The closed chunks of `sessionId` whose document is still stored and that list a gap a
    /// backfill could fill (any reason but `storeFull`), the latest `limit` of them.
    public func carriedChunks(sessionId: String, limit: Int = 16) async throws(StoreError) -> [CarriedChunk] {
        try await read("reading the chunks a hand-off carries") { db in
            let chunks = try db.all("""
                SELECT \(ChunkRecord.columns) FROM chunk WHERE sessionId = ? AND gaps != '[]' AND isOpen = 0 AND pruned = 0
                ORDER BY startMs DESC
                """, [sessionId], ChunkRecord.init(row:))
            var carried: [CarriedChunk] = []
            for chunk in chunks where chunk.gaps.contains(where: { $0.reason != .storeFull }) {
                guard carried.count < limit else { break }
                let path = try DocumentPath.chunk(chunk.id)
                if let stored = try db.first("SELECT body, retained FROM document WHERE path = ?", [path.rawValue], {
                    CarriedChunk(chunk: chunk, body: try $0.bytes(0), retained: try $0.bool(1))
                }) {
                    carried.append(stored)
                }
            }
            return carried.reversed()
        }
    }
}
