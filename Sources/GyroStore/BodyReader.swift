import GRDB
import GRDBSQLite

/// Reads document bodies with SQLite's incremental blob I/O, one copy from the database pages
/// into the returned array. One blob handle is reused (`sqlite3_blob_reopen`) for a whole
/// page of outbox rows; use it inside one read and `close()` it before the read ends.
struct BodyReader {
    let db: Database
    private var blob: OpaquePointer?

    init(_ db: Database) { self.db = db }

    mutating func body(rowid: Int64, length: Int) throws -> [UInt8] {
        guard length > 0 else { return [] }
        if let blob {
            try check(sqlite3_blob_reopen(blob, rowid), "reopening the body of document row \(rowid)")
        } else {
            try check(sqlite3_blob_open(db.sqliteConnection, "main", "document", "body", rowid, 0, &blob),
                      "opening the body of document row \(rowid)")
        }
        guard let blob, Int(sqlite3_blob_bytes(blob)) == length else {
            throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: "document row \(rowid): body length changed during a read")
        }
        return try [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
            try check(sqlite3_blob_read(blob, buffer.baseAddress, Int32(length), 0), "reading the body of document row \(rowid)")
            count = length
        }
    }

    mutating func close() {
        sqlite3_blob_close(blob)
        blob = nil
    }

    private func check(_ code: Int32, _ context: String) throws {
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "\(context): \(String(cString: sqlite3_errmsg(db.sqliteConnection)))")
        }
    }
}
