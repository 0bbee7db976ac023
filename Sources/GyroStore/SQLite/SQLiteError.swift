import CSQLite

/// A failure reported by SQLite, with what an operator needs to place it: the extended result
/// code (e.g. 778, SQLITE_IOERR_WRITE, rather than only 10), SQLite's message, and the SQL.
struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The extended result code.
    let code: Int32
    let message: String
    /// The statement that failed, when there was one.
    let sql: String?

    init(code: Int32, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    /// The error SQLite holds on `connection` for a call that returned `code`.
    init(code: Int32, connection: OpaquePointer?, sql: String? = nil) {
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        // The connection's code is the last call's: trust it only when it agrees with `code`.
        self.code = extended & 0xFF == code & 0xFF ? extended : code
        self.message = connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? Self.text(of: code)
        self.sql = sql
    }

    /// The primary result code (SQLITE_FULL, SQLITE_IOERR, …).
    var primaryCode: Int32 { code & 0xFF }

    /// The file is not a database or is damaged: it should be moved aside, not written.
    var isCorruption: Bool { primaryCode == SQLITE_CORRUPT || primaryCode == SQLITE_NOTADB }

    /// The disk is full or refused a write: something freeing space can relieve it.
    var isFull: Bool { primaryCode == SQLITE_FULL || primaryCode == SQLITE_IOERR }

    var description: String {
        var text = "SQLite error \(code) (\(Self.text(of: code))): \(message)"
        if let sql { text += " [SQL: \(sql.split(whereSeparator: \.isNewline).map { $0.drop { $0 == " " } }.joined(separator: " "))]" }
        return text
    }

    static func text(of code: Int32) -> String {
        sqlite3_errstr(code).map { String(cString: $0) } ?? "unknown result code"
    }
}
