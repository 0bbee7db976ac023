import CSQLite

/// Reads document bodies with SQLite's incremental blob I/O, one copy from the database pages
/// into one reused buffer. One blob handle is reused
/// (`sqlite3_blob_reopen`) for a whole page of outbox rows; use it inside one read and
/// `close()` it before the read ends.
struct BodyReader {
    let db: SQLiteConnection
    private var blob: OpaquePointer?
    /// `withBody`'s buffer, reused for every row: it stays in the CPU's cache between the read
    /// and the publish, where a fresh array per body would be cold memory each time.
    private var buffer: [UInt8] = []
    /// The JSON of a compact chunk body (``ChunkBody``), reused likewise.
    private var rendered: [UInt8] = []

    init(_ db: SQLiteConnection) { self.db = db }

    /// Calls `use` with the body as JSON (a compact chunk body rendered), valid only during the call.
    mutating func withBody<T>(rowid: Int64, length: Int, _ use: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        guard length > 0 else { return try use(UnsafeRawBufferPointer(start: nil, count: 0)) }
        guard length <= Int(Int32.max) else {
            throw SQLiteError(code: SQLITE_TOOBIG, message: "document row \(rowid): a body of \(length) bytes")
        }
        let blob = try open(rowid: rowid, length: length)
        if buffer.count < length { buffer = [UInt8](repeating: 0, count: length) }
        let db = self.db
        let parts = try buffer.withUnsafeMutableBytes { bytes throws -> ChunkBody.Parts? in
            try Self.check(sqlite3_blob_read(blob, bytes.baseAddress, Int32(length), 0), "reading the body of document row \(rowid)", db)
            guard ChunkBody.isCompact(bytes[..<length]) else { return nil }
            guard let parts = ChunkBody.decode(UnsafeRawBufferPointer(rebasing: bytes[..<length])) else {
                throw SQLiteError(code: SQLITE_CORRUPT, message: "document row \(rowid): its chunk body is damaged")
            }
            return parts
        }
        if let parts {
            ChunkBody.render(parts, into: &rendered)
            return try rendered.withUnsafeBytes { try use($0) }
        }
        return try buffer.withUnsafeBytes { try use(UnsafeRawBufferPointer(rebasing: $0[..<length])) }
    }

    private mutating func open(rowid: Int64, length: Int) throws -> OpaquePointer {
        if let blob {
            try Self.check(sqlite3_blob_reopen(blob, rowid), "reopening the body of document row \(rowid)", db)
        } else {
            try Self.check(sqlite3_blob_open(db.handle, "main", "document", "body", rowid, 0, &blob),
                           "opening the body of document row \(rowid)", db)
        }
        guard let blob, Int(sqlite3_blob_bytes(blob)) == length else {
            throw SQLiteError(code: SQLITE_CORRUPT, message: "document row \(rowid): body length changed during a read")
        }
        return blob
    }

    mutating func close() {
        sqlite3_blob_close(blob)
        blob = nil
    }

    /// `context` is built only for an error: it is evaluated for every row otherwise.
    private static func check(_ code: Int32, _ context: @autoclosure () -> String, _ db: SQLiteConnection) throws(SQLiteError) {
        guard code == SQLITE_OK else {
            let error = SQLiteError(code: code, connection: db.handle)
            throw SQLiteError(code: error.code, message: "\(context()): \(error.message)")
        }
    }
}
