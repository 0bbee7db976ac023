// Which outbox rows a commit added: seq and document path, read on a read-only connection of
// its own (the store's API hands rows to a publisher with their bodies rendered, which a fill
// of hundreds of thousands of chunks does not need). They are then acknowledged through the
// store's own `acknowledge`, as the publisher does after the broker's PUBACKs.
import CSQLite

final class OutboxRows {
    private var db: OpaquePointer?

    init(databasePath: String) throws {
        guard sqlite3_open_v2(databasePath, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            throw Usage.bad("cannot open \(databasePath) to read its outbox")
        }
    }

    deinit { sqlite3_close(db) }

    func rows(after seq: Int64) throws -> [(seq: Int64, path: String)] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "SELECT seq, documentPath FROM outbox WHERE seq > ? ORDER BY seq", -1, &statement, nil) == SQLITE_OK else {
            throw Usage.bad("reading the outbox: \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_int64(statement, 1, seq)
        var rows: [(seq: Int64, path: String)] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            let path = sqlite3_column_text(statement, 1).map { String(cString: $0) } ?? ""
            rows.append((sqlite3_column_int64(statement, 0), path))
        }
        return rows
    }

    /// The highest seq in the outbox now (0 when it is empty).
    func lastSeq() -> Int64 {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, "SELECT COALESCE(MAX(seq), 0) FROM outbox", -1, &statement, nil) == SQLITE_OK else { return 0 }
        defer { sqlite3_finalize(statement) }
        return sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_int64(statement, 0) : 0
    }
}
