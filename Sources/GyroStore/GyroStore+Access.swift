import PosixThreads

extension GyroStore {
    /// The writer's thread. An actor whose `unownedExecutor` is this one runs on that thread:
    /// its writes (``commit(_:)``, ``acknowledge(_:)``) are then synchronous calls, with no
    /// thread to wake and none to come back to, and its timers (`ThreadExecutor.schedule(at:_:)`)
    /// ring there.
    public var writerExecutor: ThreadExecutor { writer.executor }

    /// Runs `body` on the writer in one transaction (BEGIN IMMEDIATE … COMMIT, or ROLLBACK if it throws).
    ///
    /// `nonisolated(nonsending)`, like every store call on the way to a connection: it runs on
    /// the caller's executor, so a caller on the writer's thread stays there, and one on a
    /// reader's thread goes from its own executor to the reader and back, not through the
    /// global executor on the way.
    ///
    /// Once SQLite has found the file damaged (`StoreHealth`), every write is refused with
    /// ``StoreError/damaged(reason:)``; a write that meets the damage marks it.
    nonisolated(nonsending)
    func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try health.refuseWritesIfDamaged()
        do { return try await writer.run { db in try db.transaction(.immediate) { try body(db) } } } catch { throw noticingDamage(error) }
    }

    /// ``write(_:)`` with the sample ring's state, kept only if the transaction commits.
    nonisolated(nonsending)
    func writeWithRing<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection, inout SampleRing) throws -> T) async throws -> T {
        try health.refuseWritesIfDamaged()
        do {
            return try await writer.run(withRing: { db, ring in try db.transaction(.immediate) { try body(db, &ring) } })
        } catch {
            throw noticingDamage(error)
        }
    }

    /// Runs `body` on the writer outside any transaction: it manages its own, or sets pragmas.
    nonisolated(nonsending)
    func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try health.refuseWritesIfDamaged()
        do { return try await writer.run(body) } catch { throw noticingDamage(error) }
    }

    /// Runs `body` in a read transaction: on a reader of a file store, on the writer of an in-memory one.
    /// Reads go on once the file is found damaged (the status must still answer); a read that
    /// meets the damage marks it.
    nonisolated(nonsending)
    func read<T: Sendable>(_ context: String, _ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws(StoreError) -> T {
        do {
            if let readers { return try await readers.read(body) }
            return try await writer.run { db in try db.transaction(.deferred) { try body(db) } }
        } catch let error as SQLiteError where error.isCorruption {
            _ = noticingDamage(error)
            throw .damaged(reason: "\(context): \(error)")
        } catch {
            throw .database(context: context, reason: "\(error)")
        }
    }

    /// ``read(_:_:)`` on a reader that reads the file with `pread`, not through the memory map:
    /// for reads that walk many small rows (a session's chunk rows), not document bodies.
    ///
    /// Why: the chunk table's leaf pages lie between the chunk bodies' pages all over the file
    /// (they are written together). Through the map, each page read faults in the pages around
    /// it too (the kernel's fault-around, 64 KiB, and readahead), and they stay resident: the
    /// start's recovery of four open sessions of 3,000 chunks each read 2.5 MB of rows and
    /// left 89 MB of the 110 MB file in the process (docs/benchmarks-store.md). Read with
    /// `pread`, only the pages read are read, into the kernel's page cache and this
    /// connection's small one, not the process.
    nonisolated(nonsending)
    func readRows<T: Sendable>(_ context: String, _ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws(StoreError) -> T {
        guard let rowReaders else { return try await read(context, body) }
        do {
            return try await rowReaders.read(body)
        } catch let error as SQLiteError where error.isCorruption {
            _ = noticingDamage(error)
            throw .damaged(reason: "\(context): \(error)")
        } catch {
            throw .database(context: context, reason: "\(error)")
        }
    }

    /// `error`, after marking the store damaged when it is SQLite's corruption error
    /// (SQLITE_CORRUPT, SQLITE_NOTADB): data SQLite found damaged is never trusted silently.
    ///
    /// A plain function, not a wrapper taking the work as a closure: an async closure passed
    /// along would run on the global executor, and every commit would hop off the writer's
    /// thread and back.
    private func noticingDamage(_ error: any Error) -> any Error {
        if let error = error as? SQLiteError, error.isCorruption { health.markDamaged("\(error)") }
        return error
    }
}
