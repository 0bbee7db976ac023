import CSQLite
import FoundationEssentials
import JSON

/// Why a dump of the store failed.
public enum StoreDumpError: Error, CustomStringConvertible, Sendable {
    /// No store file in the directory.
    case noStore(path: String)
    /// SQLite refused a read, or what it read does not decode; `context` names what was read.
    case read(context: String, reason: String)
    /// The lines could not be written where they go.
    case output(reason: String)

    public var description: String {
        switch self {
        case .noStore(let path): "store dump: no store at \(path); name the gateway's dataDirectory"
        case .read(let context, let reason): "store dump: \(context) failed: \(reason)"
        case .output(let reason): "store dump: writing the lines failed: \(reason)"
        }
    }
}

/// Everything a store file holds, as JSON Lines, read on a read-only connection in one read
/// transaction (`gyrogate store dump`, docs/durability.md, "Reading a store"): for tests and
/// for an operator looking at a store, so that nothing outside this module reads its tables or
/// decodes its formats.
///
/// Read-only: the file and its WAL are not written (a gateway SIGKILLed or a power cut leaves a
/// WAL, which the reader reads as the next gateway would replay it; a copy of the three files is
/// read the same way). SQLite may rebuild the `-shm` index from the WAL, which is not the store.
///
/// One line per object, in this order, each with its `kind`:
/// - `store`: `integrity` (`PRAGMA integrity_check`, "ok" or its problems), `damagedRingSlots`;
/// - `session`: its row as stored (an open session's counts are as of its last full write);
/// - `chunk`: its row, `document` (whether a closed chunk's document is stored, not empty) and `points`,
///   `[timestampMs, x, y, z, backfilled]` each, as a subscriber of its document reads them: a
///   closed chunk's from its document, an open chunk's from the sample ring (and `sampleBatch`);
/// - `document`: every document but the chunk documents of chunk rows, `body` its JSON (`null`
///   for an empty body: a deletion);
/// - `outbox`: every publish not yet acknowledged.
///
/// A row's times and rates are written as the column's `Double`, exactly (its shortest text).
public enum StoreDump {
    /// Writes the lines of the store in `directory` to `output`, each ending in a newline.
    public static func write(directory: String, to output: ([UInt8]) throws(StoreDumpError) -> Void) throws(StoreDumpError) {
        let path = GyroStore.filePath(directory, GyroStore.fileName)
        guard FileManager.default.fileExists(atPath: path) else { throw .noStore(path: path) }
        let db = try reading("opening \(path) read-only") { () throws in
            let db = try SQLiteConnection(path: path, options: .init(readOnly: true))
            try GyroStore.prepare(db)
            try db.execute("PRAGMA mmap_size = 0")
            return db
        }
        let integrity = try reading("PRAGMA integrity_check") {
            try db.all("PRAGMA integrity_check") { try $0.text(0) }.joined(separator: "; ")
        }
        try reading("beginning a read transaction") { try db.execute("BEGIN") }
        defer { try? db.execute("COMMIT") }
        let slots = try reading("reading the sample ring") { try GyroStore.ringSlots(db) }
        var line = JSONWriter()
        line.beginObject()
        line.key("kind"); line.string("store")
        line.key("integrity"); line.string(integrity)
        line.key("damagedRingSlots"); line.integer(slots.filter { (try? RingSlot.decode($0)) == nil && ($0.first ?? 0) != 0 }.count)
        line.endObject()
        try output(finished(line))

        let sessions = try reading("reading the sessions") {
            try db.all("SELECT \(SessionRecord.columns) FROM session ORDER BY device, startMs, id", [], SessionRecord.init(row:))
        }
        for session in sessions { try output(finished(sessionLine(session))) }

        let chunks = try reading("reading the chunks") {
            try db.all("SELECT \(ChunkRecord.columns) FROM chunk ORDER BY sessionId, stream, isOpen, startMs, seq, id", [], ChunkRecord.init(row:))
        }
        for chunk in chunks {
            let (document, points) = try reading("reading the points of chunk \(chunk.id)") { () throws -> (Bool, [ChunkBody.Point]) in
                if chunk.isOpen {
                    let samples = try GyroStore.samples(ofChunk: chunk.id, in: db, slots: slots).samples
                    return (false, samples.map { ChunkBody.Point($0, backfilled: false) })
                }
                let path = "\(DocumentPath.chunkCollection)/\(chunk.id)"
                guard let body = try db.first("SELECT body FROM document WHERE path = ?", [path], { try $0.bytes(0) }), !body.isEmpty else {
                    return (false, [])
                }
                return (true, try GyroStore.points(ofBody: body, path: path))
            }
            try output(finished(chunkLine(chunk, document: document, points: points)))
        }

        try reading("reading the documents") {
            try db.statement("""
                SELECT path, collection, version, retained, body FROM document
                WHERE NOT (collection = '\(DocumentPath.chunkCollection)' AND EXISTS (SELECT 1 FROM chunk WHERE chunk.id = substr(document.path, \(DocumentPath.chunkCollection.utf8.count + 2))))
                ORDER BY path
                """).forEachRow { row in
                let path = try row.text(0)
                var line = JSONWriter()
                line.beginObject()
                line.key("kind"); line.string("document")
                line.key("path"); line.string(path)
                line.key("collection"); line.string(try row.text(1))
                line.key("version"); line.integer(try row.int64(2))
                line.key("retained"); line.bool(try row.bool(3))
                line.key("body")
                let body = try row.bytes(4)
                if body.isEmpty {
                    line.null()
                } else {
                    guard let json = ChunkBody.json(body) else { throw StoreError.damagedSamples(chunk: path, reason: "its chunk body does not decode") }
                    do { _ = try JSONValue(parsing: json) } catch { throw StoreError.database(context: "document \(path)", reason: "its body is not JSON: \(error)") }
                    line.json(json)
                }
                line.endObject()
                try output(finished(line))
                return true
            }
        }

        try reading("reading the outbox") {
            try db.statement("SELECT seq, topic, documentPath, qos, retain, parkedAt FROM outbox ORDER BY seq").forEachRow { row in
                var line = JSONWriter()
                line.beginObject()
                line.key("kind"); line.string("outbox")
                line.key("seq"); line.integer(try row.int64(0))
                line.key("topic"); line.string(try row.text(1))
                line.key("documentPath")
                if let path = try row.optionalText(2) { line.string(path) } else { line.null() }
                line.key("qos"); line.integer(try row.int(3))
                line.key("retain"); line.bool(try row.bool(4))
                line.key("parked"); line.bool(try row.optionalDouble(5) != nil)
                line.endObject()
                try output(finished(line))
                return true
            }
        }
    }

    static func sessionLine(_ session: SessionRecord) -> JSONWriter {
        var line = JSONWriter()
        line.beginObject()
        line.key("kind"); line.string("session")
        line.key("id"); line.string(session.id)
        line.key("userId"); line.string(session.userId)
        line.key("device"); line.string(session.device)
        line.key("startMs"); line.exactNumber(session.startMs)
        line.key("endMs"); optional(session.endMs, &line)
        line.key("lastSampleMs"); optional(session.lastSampleMs, &line)
        line.key("samples"); line.integer(session.samples)
        line.key("expected"); line.integer(session.expected)
        line.key("gaps"); gaps(session.gaps, &line)
        line.key("hazards"); line.beginObject()
        for (name, count) in session.hazards.sorted(by: { $0.key < $1.key }) { line.key(name); line.integer(count) }
        line.endObject()
        line.key("chunks"); line.integer(session.chunkCount)
        line.key("isOpen"); line.bool(session.isOpen)
        line.key("localDate"); line.string(session.localDate)
        line.key("dating")
        if let dating = session.dating { line.string(dating.rawValue) } else { line.null() }
        line.endObject()
        return line
    }

    static func chunkLine(_ chunk: ChunkRecord, document: Bool, points: [ChunkBody.Point]) -> JSONWriter {
        var line = JSONWriter(capacity: 64 + points.count * 56)
        line.beginObject()
        line.key("kind"); line.string("chunk")
        line.key("id"); line.string(chunk.id)
        line.key("sessionId"); line.string(chunk.sessionId)
        line.key("stream"); line.string(chunk.stream)
        line.key("seq"); line.integer(chunk.seq)
        line.key("odrHz"); line.exactNumber(chunk.odrHz)
        line.key("range"); line.exactNumber(chunk.range)
        line.key("firstIndex"); line.integer(chunk.firstIndex)
        line.key("count"); line.integer(chunk.count)
        line.key("startMs"); optional(chunk.startMs, &line)
        line.key("endMs"); optional(chunk.endMs, &line)
        line.key("gaps"); gaps(chunk.gaps, &line)
        line.key("isOpen"); line.bool(chunk.isOpen)
        line.key("pruned"); line.bool(chunk.pruned)
        line.key("document"); line.bool(document)
        line.key("points"); line.beginArray()
        for point in points { line.point(point) }
        line.endArray()
        line.endObject()
        return line
    }

    private static func optional(_ value: Double?, _ line: inout JSONWriter) {
        if let value { line.exactNumber(value) } else { line.null() }
    }

    private static func gaps(_ gaps: [GapRange], _ line: inout JSONWriter) {
        line.beginArray()
        for gap in gaps {
            line.beginObject()
            line.key("stream"); line.string(gap.stream)
            line.key("fromIndex"); line.integer(gap.fromIndex)
            line.key("toIndex"); line.integer(gap.toIndex)
            line.key("fromMs"); line.exactNumber(gap.fromMs)
            line.key("toMs"); line.exactNumber(gap.toMs)
            line.key("missing"); line.integer(gap.missing)
            line.key("reason"); line.string(gap.reason.rawValue)
            line.endObject()
        }
        line.endArray()
    }

    private static func finished(_ line: JSONWriter) -> [UInt8] { line.bytes + [UInt8(ascii: "\n")] }

    /// `body`, its errors as ``StoreDumpError/read(context:reason:)``.
    private static func reading<T>(_ context: @autoclosure () -> String, _ body: () throws -> T) throws(StoreDumpError) -> T {
        do {
            return try body()
        } catch let error as StoreDumpError {
            throw error
        } catch {
            throw .read(context: context(), reason: "\(error)")
        }
    }
}

extension JSONWriter {
    /// `[timestampMs, x, y, z, backfilled]`, with the decimals the chunk document has.
    mutating func point(_ point: ChunkBody.Point) {
        composedValue { out in
            func scaled(_ value: Int64, places: Int, scale: Double) {
                if value == ChunkBody.missing { out.raw(Self.nullText) } else { out.number(Double(value) / scale, decimals: places) }
            }
            out.raw(Self.open)
            scaled(point.time, places: ChunkBody.timePlaces, scale: 1_000)
            out.raw(Self.comma); scaled(point.x, places: ChunkBody.axisPlaces, scale: 100_000)
            out.raw(Self.comma); scaled(point.y, places: ChunkBody.axisPlaces, scale: 100_000)
            out.raw(Self.comma); scaled(point.z, places: ChunkBody.axisPlaces, scale: 100_000)
            out.raw(point.backfilled ? Self.backfilledClose : Self.close)
        }
    }

    private static let open = Array("[".utf8), comma = Array(",".utf8), nullText = Array("null".utf8)
    private static let close = Array(",false]".utf8), backfilledClose = Array(",true]".utf8)
}
