import JSON

/// One chunk's bookkeeping and its points, in time order, as a subscriber of its document
/// would read them.
public struct ChunkPoints: Sendable {
    public var chunk: ChunkRecord
    public var points: [ChunkBody.Point]
}

/// A session and the ids of its chunks, per stream, in the order their points come.
public struct SessionChunkOrder: Sendable {
    public var session: SessionRecord
    public var gyro: [String]
    public var accelerometer: [String]

    public func chunkIds(stream: String) -> [String] { stream == "accelerometer" ? accelerometer : gyro }
}

/// A read-only connection of its own for one export, which reads the file with `pread`
/// instead of the readers' memory map, and caches little.
///
/// Why: an export reads every page of its sessions once. Through the readers' map each page
/// read stays resident in the process (a 4-hour 400 Hz session is about 25 MB of file), so
/// the exporting process grew with the session; read with `pread`, what it holds is its small
/// page cache and one chunk (docs/benchmarks.md, "Export"). Closed with its last reference.
public final class ExportReader: Sendable {
    let store: GyroStore
    private let pool: ReaderPool?

    init(store: GyroStore) {
        self.store = store
        guard let directory = store.directory else { pool = nil; return }
        let path = directory.hasSuffix("/") ? directory + GyroStore.fileName : directory + "/" + GyroStore.fileName
        pool = ReaderPool(maximum: 1) { () throws(SQLiteError) in
            let reader = try SQLiteConnection(path: path, options: .init(readOnly: true))
            try GyroStore.prepare(reader)
            try reader.execute("PRAGMA mmap_size = 0")
            return reader
        }
    }

    nonisolated(nonsending)
    func read<T: Sendable>(_ context: String, _ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws(StoreError) -> T {
        guard let pool else { return try await store.read(context, body) }
        do {
            return try await pool.read(body)
        } catch let error as SQLiteError where error.isCorruption {
            throw .damaged(reason: "\(context): \(error)")
        } catch {
            throw .database(context: context, reason: "\(error)")
        }
    }
}

extension GyroStore {
    /// A reader for one export (``ExportReader``).
    public func exportReader() -> ExportReader { ExportReader(store: self) }
}

/// Reads for export: a session's chunks one at a time, so that a reader of a 4-hour session
/// holds one chunk's points (at most `capture.chunkSize`), never the session.
extension ExportReader {
    /// The session and its chunk ids in order, read in one transaction: the closed chunks as
    /// its record lists them (`gscope_data`: in order of their first samples), then
    /// the open ones by position. `nil` when there is no such session.
    public func chunkOrder(sessionId: String) async throws(StoreError) -> SessionChunkOrder? {
        try await read("listing the chunks of \(sessionId)") { db in
            guard let session = try SessionRecord.read(db, "WHERE id = ?", [sessionId], lists: true).first else { return nil }
            let open = try db.all("SELECT id, stream FROM chunk WHERE sessionId = ? AND isOpen = 1 ORDER BY stream, seq", [sessionId]) {
                (id: try $0.text(0), stream: try $0.text(1))
            }
            return SessionChunkOrder(session: session,
                                     gyro: session.chunkIds + open.filter { $0.stream != "accelerometer" }.map(\.id),
                                     accelerometer: session.accelChunkIds + open.filter { $0.stream == "accelerometer" }.map(\.id))
        }
    }

    /// One chunk's points: a closed chunk's from its document, an open chunk's from the sample
    /// ring (those carry no backfilled flag: a backfill renders closed chunks only). A chunk
    /// whose document retention removed has no points. `nil` when the chunk is gone (its
    /// session deleted). Chunk and points are read in one transaction, so a chunk that closes
    /// meanwhile is read whole from one place or the other.
    public func points(ofChunk chunkId: String) async throws(StoreError) -> ChunkPoints? {
        let (result, damaged) = try await read("reading the points of \(chunkId)") { db -> (ChunkPoints?, Int) in
            guard let chunk = try db.first("SELECT \(ChunkRecord.columns) FROM chunk WHERE id = ?", [chunkId], ChunkRecord.init(row:)) else {
                return (nil, 0)
            }
            if chunk.isOpen {
                let (samples, damaged) = try GyroStore.samples(ofChunk: chunkId, in: db, slots: try GyroStore.ringSlots(db))
                return (ChunkPoints(chunk: chunk, points: samples.map { ChunkBody.Point($0, backfilled: false) }), damaged)
            }
            let path = "\(DocumentPath.chunkCollection)/\(chunkId)"
            guard let body = try db.first("SELECT body FROM document WHERE path = ?", [path], { try $0.bytes(0) }) else {
                return (ChunkPoints(chunk: chunk, points: []), 0)
            }
            return (ChunkPoints(chunk: chunk, points: try GyroStore.points(ofBody: body, path: path)), 0)
        }
        if damaged > 0 { store.logDamagedRing(chunk: chunkId, slots: damaged) }
        return result
    }

}

extension GyroStore {
    /// A chunk document's points: decoded from the compact body, or read from the JSON an
    /// older gateway stored.
    static func points(ofBody body: [UInt8], path: String) throws -> [ChunkBody.Point] {
        if ChunkBody.isCompact(body) {
            guard let parts = ChunkBody.decode(body) else { throw StoreError.damagedSamples(chunk: path, reason: "its chunk body does not decode") }
            return parts.points
        }
        guard let data = (try? JSONValue(parsing: body))?["data"]?.array else {
            throw StoreError.damagedSamples(chunk: path, reason: "its document has no \"data\" array")
        }
        return data.map { point in
            let axes = point.object.map { object in ["x", "y", "z"].map { axis in object.first { $0.key.count == 2 && $0.key.hasSuffix(axis) }?.value.double ?? .nan } }
                ?? [.nan, .nan, .nan]
            let sample = StoredSample(timestampMs: point["timestamp"]?.double ?? .nan, x: Float(axes[0]), y: Float(axes[1]), z: Float(axes[2]))
            return ChunkBody.Point(sample, backfilled: point["backfilled"]?.bool ?? false)
        }
    }
}
