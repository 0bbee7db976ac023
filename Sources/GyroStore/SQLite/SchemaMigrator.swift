/// Applies the schema's migrations in order, each once, in a transaction of its own.
///
/// Applied migrations are recorded by identifier in `grdb_migrations`, the table GRDB's
/// migrator kept before the store used SQLite directly: stores written by those versions open
/// with their history intact, and none of their migrations runs again or is skipped.
struct SchemaMigrator {
    struct Migration {
        let identifier: String
        let apply: (SQLiteConnection) throws -> Void
    }

    static let historyTable = "grdb_migrations"

    private(set) var migrations: [Migration] = []

    mutating func register(_ identifier: String, _ apply: @escaping (SQLiteConnection) throws -> Void) {
        migrations.append(Migration(identifier: identifier, apply: apply))
    }

    /// Identifiers of the migrations recorded as applied.
    static func applied(in db: SQLiteConnection) throws -> Set<String> {
        let exists = try db.first("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [historyTable]) { _ in true } ?? false
        guard exists else { return [] }
        return Set(try db.all("SELECT identifier FROM \(historyTable)") { try $0.text(0) })
    }

    /// Applies the migrations not yet recorded; returns their identifiers. Identifiers recorded
    /// but unknown here (a store written by a newer gateway) are returned in `unknown`.
    @discardableResult
    func migrate(_ db: SQLiteConnection) throws -> (applied: [String], unknown: [String]) {
        try db.execute("CREATE TABLE IF NOT EXISTS \(Self.historyTable) (identifier TEXT NOT NULL PRIMARY KEY)")
        let done = try Self.applied(in: db)
        var applied: [String] = []
        for migration in migrations where !done.contains(migration.identifier) {
            try db.transaction(.immediate) {
                try migration.apply(db)
                try db.run("INSERT INTO \(Self.historyTable) (identifier) VALUES (?)", [migration.identifier])
            }
            applied.append(migration.identifier)
        }
        let known = Set(migrations.map(\.identifier))
        return (applied, done.subtracting(known).sorted())
    }
}
