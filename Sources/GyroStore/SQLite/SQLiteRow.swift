import CSQLite

/// The current row of a statement being stepped; valid only inside the visit that received it.
///
/// Columns are read by position, checked against the row's width; a NULL where the schema
/// promises a value is an error, never a trap, so a damaged row cannot stop the gateway.
struct SQLiteRow {
    let statement: SQLiteStatement

    var columnCount: Int { Int(sqlite3_column_count(statement.handle)) }

    func isNull(_ index: Int) throws(SQLiteError) -> Bool {
        try type(index) == SQLITE_NULL
    }

    func int64(_ index: Int) throws(SQLiteError) -> Int64 {
        try present(index)
        return sqlite3_column_int64(statement.handle, Int32(index))
    }

    func int(_ index: Int) throws(SQLiteError) -> Int { Int(try int64(index)) }

    func bool(_ index: Int) throws(SQLiteError) -> Bool { try int64(index) != 0 }

    func double(_ index: Int) throws(SQLiteError) -> Double {
        try present(index)
        return sqlite3_column_double(statement.handle, Int32(index))
    }

    func text(_ index: Int) throws(SQLiteError) -> String {
        try present(index)
        return textValue(index)
    }

    func optionalInt64(_ index: Int) throws(SQLiteError) -> Int64? {
        try isNull(index) ? nil : sqlite3_column_int64(statement.handle, Int32(index))
    }

    func optionalDouble(_ index: Int) throws(SQLiteError) -> Double? {
        try isNull(index) ? nil : sqlite3_column_double(statement.handle, Int32(index))
    }

    func optionalText(_ index: Int) throws(SQLiteError) -> String? {
        try isNull(index) ? nil : textValue(index)
    }

    /// A blob (or text) column's bytes, copied; NULL reads as empty.
    func bytes(_ index: Int) throws(SQLiteError) -> [UInt8] {
        _ = try type(index)
        let base = sqlite3_column_blob(statement.handle, Int32(index))
        let count = Int(sqlite3_column_bytes(statement.handle, Int32(index)))
        return count > 0 ? [UInt8](UnsafeRawBufferPointer(start: base, count: count)) : []
    }

    /// Calls `use` with the column's bytes in place, valid only during the call; NULL is empty.
    func withBytes<T>(_ index: Int, _ use: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        _ = try type(index)
        // The pointer first, then the length: that is the order SQLite documents as safe.
        let base = sqlite3_column_blob(statement.handle, Int32(index))
        let count = Int(sqlite3_column_bytes(statement.handle, Int32(index)))
        return try use(UnsafeRawBufferPointer(start: count > 0 ? base : nil, count: count))
    }

    private func textValue(_ index: Int) -> String {
        guard let text = sqlite3_column_text(statement.handle, Int32(index)) else { return "" }
        let count = Int(sqlite3_column_bytes(statement.handle, Int32(index)))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    private func type(_ index: Int) throws(SQLiteError) -> Int32 {
        guard index >= 0, index < columnCount else {
            throw SQLiteError(code: SQLITE_RANGE, message: "no column \(index) in a row of \(columnCount)", sql: statement.sql)
        }
        return sqlite3_column_type(statement.handle, Int32(index))
    }

    private func present(_ index: Int) throws(SQLiteError) {
        guard try type(index) != SQLITE_NULL else {
            let name = sqlite3_column_name(statement.handle, Int32(index)).map { String(cString: $0) } ?? "#\(index)"
            throw SQLiteError(code: SQLITE_MISMATCH, message: "column \(name) is NULL where a value is required", sql: statement.sql)
        }
    }
}
