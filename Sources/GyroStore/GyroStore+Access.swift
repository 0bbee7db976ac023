extension GyroStore {
    /// Runs `body` on the writer in one transaction (BEGIN IMMEDIATE … COMMIT, or ROLLBACK if it throws).
    func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await writer.run { db in try db.transaction(.immediate) { try body(db) } }
    }

    /// Runs `body` on the writer outside any transaction: it manages its own, or sets pragmas.
    func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await writer.run(body)
    }

    /// Runs `body` in a read transaction: on a reader of a file store, on the writer of an in-memory one.
    func read<T: Sendable>(_ context: String, _ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws(StoreError) -> T {
        do {
            if let readers { return try await readers.read(body) }
            return try await writer.run { db in try db.transaction(.deferred) { try body(db) } }
        } catch {
            throw .database(context: context, reason: "\(error)")
        }
    }
}
