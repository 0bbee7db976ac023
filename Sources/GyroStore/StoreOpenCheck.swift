import CSQLite

/// What the store checks of its file at open, in time that does not grow with the file.
///
/// `PRAGMA quick_check` reads every page: 25-50 s for 2 GB on an SD card, at every start and
/// every watchdog restart. At open the store now reads what it must trust to start, and what the
/// last run wrote, and leaves the whole file to the check in the background
/// (``GyroStore/verifyIntegrity()``):
///
/// - the database header and the schema (every table and index, parsed by SQLite);
/// - every b-tree's root and both edges: the first entry and the last few of each table (their
///   whole rows, overflow pages included) and of each index, which is where the rows the last
///   runs appended live (sessions, chunks, documents and outbox rows are added at the end of
///   their rowid order);
/// - with `PRAGMA cell_size_check` on (every connection sets it), each of those pages' cells is
///   checked against the page's bounds as SQLite loads it, not only its header;
/// - `CheckpointCheck`, before SQLite opens the file: the pages the last checkpoint wrote;
/// - then, as the store opens, what recovery reads: the migrations' bookkeeping, the sample
///   ring's every slot (each with its checksum), the open sessions and their chunks, the board
///   reset times. Any of these SQLite finds malformed fails the open as corruption.
///
/// docs/durability.md ("Corruption") says what is caught where, and what the gateway does then.
enum StoreOpenCheck {
    /// Rows read at the end of each b-tree: a few pages' worth, the last run's appends.
    static let edgeRows = 8

    /// Reads the schema and every b-tree's edges; throws SQLite's corruption error, or one of its
    /// own (SQLITE_CORRUPT) naming the tree, when a page does not hold together.
    static func verify(_ db: SQLiteConnection) throws {
        let trees = try db.all("SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema WHERE rootpage > 0 ORDER BY rootpage") {
            Tree(type: try $0.text(0), name: try $0.text(1), table: try $0.text(2), sql: try $0.text(3))
        }
        for tree in trees {
            do {
                for sql in try tree.edgeQueries(db) { try readAll(db, sql) }
            } catch let error as SQLiteError where error.isCorruption {
                throw SQLiteError(code: error.code, message: "\(tree.type) \(tree.name): \(error.message)", sql: error.sql)
            } catch let error as SQLiteError where error.primaryCode == SQLITE_ERROR {
                // A query SQLite cannot plan (an index it will not use so) checks nothing; damage
                // and read errors are what count.
                continue
            } catch let error as SQLiteError {
                throw error
            } catch {
                throw SQLiteError(code: SQLITE_ERROR, message: "checking \(tree.type) \(tree.name): \(error)")
            }
        }
    }

    /// Steps through every row of `sql`, reading each column, so that overflow pages are loaded.
    /// Prepared for this once, not kept in the connection's cache.
    private static func readAll(_ db: SQLiteConnection, _ sql: String) throws {
        let statement = try SQLiteStatement(sql: sql, connection: db.handle)
        try statement.forEachRow { row in
            for column in 0..<row.columnCount { try row.withBytes(column) { _ in } }
            return true
        }
    }

    struct Tree {
        let type: String
        let name: String
        let table: String
        let sql: String

        /// The queries that read this tree's first entry and its last ``edgeRows``.
        func edgeQueries(_ db: SQLiteConnection) throws -> [String] {
            let table = quoted(self.table)
            if type == "table" {
                if sql.uppercased().contains("WITHOUT ROWID") { return ["SELECT * FROM \(table) LIMIT \(edgeRows)"] }
                return ["SELECT * FROM \(table) ORDER BY rowid LIMIT 1", "SELECT * FROM \(table) ORDER BY rowid DESC LIMIT \(edgeRows)"]
            }
            // An index: its own columns, read through it (a covering scan touches no table page).
            let columns = try db.all("PRAGMA index_info(\(quoted(name)))") { try $0.optionalText(2) }
            guard !columns.isEmpty, columns.allSatisfy({ $0 != nil }) else { return [] }
            let list = columns.compactMap { $0 }.map(quoted)
            // A partial index is used only for its own condition.
            let condition = sql.firstRange(of: " WHERE ").map { " WHERE " + sql[$0.upperBound...] } ?? ""
            let select = "SELECT \(list.joined(separator: ", ")) FROM \(table) INDEXED BY \(quoted(name))\(condition) ORDER BY "
            return [select + list.joined(separator: ", ") + " LIMIT 1",
                    select + list.map { $0 + " DESC" }.joined(separator: ", ") + " LIMIT \(edgeRows)"]
        }

        private func quoted(_ name: String) -> String { "\"" + name.replacing("\"", with: "\"\"") + "\"" }
    }
}
