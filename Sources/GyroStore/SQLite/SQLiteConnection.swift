import CSQLite

/// One SQLite connection. Not thread-safe by design: it is opened with SQLITE_OPEN_NOMUTEX and
/// has exactly one owner at a time (the code that opens it, then its ``ConnectionActor``).
///
/// Statements run through `statement(_:)` are prepared once per SQL string and kept: commits
/// run every second on the capture path with the same few statements.
final class SQLiteConnection {
    let handle: OpaquePointer
    let path: String
    let isReadOnly: Bool
    private var statements: [String: SQLiteStatement] = [:]

    struct Options: Sendable {
        var readOnly = false
        /// How long a statement waits for another connection's lock before SQLITE_BUSY.
        var busyTimeoutMs: Int32 = 5000
    }

    init(path: String, options: Options = Options()) throws(SQLiteError) {
        var connection: OpaquePointer?
        let access = options.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        let code = sqlite3_open_v2(path, &connection, access | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let connection else {
            let error = SQLiteError(code: code, connection: connection, sql: nil)
            sqlite3_close_v2(connection)
            throw SQLiteError(code: error.code, message: "opening \(path): \(error.message)")
        }
        handle = connection
        self.path = path
        isReadOnly = options.readOnly
        sqlite3_extended_result_codes(connection, 1)
        sqlite3_busy_timeout(connection, options.busyTimeoutMs)
    }

    deinit {
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements without arguments (pragmas, schema changes), uncached.
    func execute(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw SQLiteError(code: code, connection: handle, sql: sql) }
    }

    /// The statement for `sql`, prepared on first use and reused after. A statement still being
    /// stepped further up the stack is not handed out twice: that use gets a fresh one.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statements[sql] {
            guard cached.isBusy else { return cached }
            return try SQLiteStatement(sql: sql, connection: handle)
        }
        let statement = try SQLiteStatement(sql: sql, connection: handle)
        statements[sql] = statement
        return statement
    }

    /// Runs `sql` once with `values`.
    func run(_ sql: String, _ values: [any SQLiteBindable] = []) throws(SQLiteError) {
        try statement(sql).execute(values)
    }

    /// The first row of `sql`, decoded, or `nil`.
    func first<T>(_ sql: String, _ values: [any SQLiteBindable] = [], _ decode: (SQLiteRow) throws -> T) throws -> T? {
        try statement(sql).first(values, decode)
    }

    /// Every row of `sql`, decoded.
    func all<T>(_ sql: String, _ values: [any SQLiteBindable] = [], _ decode: (SQLiteRow) throws -> T) throws -> [T] {
        try statement(sql).all(values, decode)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes64(handle)) }

    /// Whether a transaction is open.
    var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    enum TransactionKind: String {
        /// Takes the write lock at once, so a write transaction never fails half-way on SQLITE_BUSY.
        case immediate = "BEGIN IMMEDIATE"
        /// Takes a read snapshot at the first read.
        case deferred = "BEGIN DEFERRED"
    }

    /// Runs `body` in a transaction: committed when it returns, rolled back when it or the commit throws.
    func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        try run(kind.rawValue)
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            // A failed COMMIT may leave the transaction open (SQLITE_BUSY, SQLITE_FULL).
            if isInTransaction { try? run("ROLLBACK") }
            throw error
        }
    }
}
