import CSQLite

/// One prepared statement of a connection, used on that connection's thread only.
///
/// Every use binds all of its parameters, steps, and resets: a statement left mid-step would
/// hold its read snapshot open, and a cached one would keep stale bindings.
final class SQLiteStatement {
    let handle: OpaquePointer
    let sql: String
    private let connection: OpaquePointer

    init(sql: String, connection: OpaquePointer) throws(SQLiteError) {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, sql, -1, 0, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw SQLiteError(code: code, connection: connection, sql: sql)
        }
        self.handle = statement
        self.sql = sql
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Whether the statement is between its first step and its reset (in use further up the stack).
    var isBusy: Bool { sqlite3_stmt_busy(handle) != 0 }

    /// Resets the statement and binds `values` to its parameters, which must match in number.
    func bind(_ values: [any SQLiteBindable]) throws(SQLiteError) {
        sqlite3_reset(handle)
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard values.count == expected else {
            throw SQLiteError(code: SQLITE_RANGE, message: "\(values.count) arguments for \(expected) parameters", sql: sql)
        }
        for (offset, value) in values.enumerated() {
            let code = value.bind(to: handle, at: Int32(offset + 1))
            guard code == SQLITE_OK else { throw SQLiteError(code: code, connection: connection, sql: sql) }
        }
    }

    /// Advances to the next row: `true` when there is one, `false` when the statement is done.
    func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let code:
            sqlite3_reset(handle)
            throw SQLiteError(code: code, connection: connection, sql: sql)
        }
    }

    /// Ends the current use. Bindings are cleared too: SQLite keeps its copy of a bound chunk
    /// document (~140 KB) until they are, for as long as the statement stays cached.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Runs the statement to its end with `values`, ignoring any rows.
    func execute(_ values: [any SQLiteBindable] = []) throws(SQLiteError) {
        try bind(values)
        defer { reset() }
        while try step() {}
    }

    /// Runs the statement with `values` and hands each row to `visit` until it returns `false`.
    func forEachRow(_ values: [any SQLiteBindable] = [], _ visit: (SQLiteRow) throws -> Bool) throws {
        try bind(values)
        defer { reset() }
        let row = SQLiteRow(statement: self)
        while try step() {
            guard try visit(row) else { return }
        }
    }

    /// The rows of the statement with `values`, each decoded by `decode`.
    func all<T>(_ values: [any SQLiteBindable] = [], _ decode: (SQLiteRow) throws -> T) throws -> [T] {
        var result: [T] = []
        try forEachRow(values) { row in
            result.append(try decode(row))
            return true
        }
        return result
    }

    /// The first row of the statement with `values`, decoded, or `nil` when there is none.
    func first<T>(_ values: [any SQLiteBindable] = [], _ decode: (SQLiteRow) throws -> T) throws -> T? {
        var result: T?
        try forEachRow(values) { row in
            result = try decode(row)
            return false
        }
        return result
    }
}
