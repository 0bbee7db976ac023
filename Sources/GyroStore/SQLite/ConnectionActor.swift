import CSQLite
import PosixThreads

/// The one owner of a connection: work on it runs on the actor's own thread
/// (``ThreadExecutor``), one call at a time. Releasing the actor closes the connection and
/// ends the thread.
actor ConnectionActor {
    private let connection: SQLiteConnection
    nonisolated let executor: ThreadExecutor

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Takes over `connection`: nothing else may use it from now on.
    init(owning connection: sending SQLiteConnection, threadName: String) throws(SQLiteError) {
        self.connection = connection
        do {
            self.executor = try ThreadExecutor(name: threadName)
        } catch {
            throw SQLiteError(code: SQLITE_NOMEM, message: "cannot start a thread for a store connection (\(error))")
        }
    }

    deinit { executor.stop() }

    /// Runs `body` with the connection on the actor's thread and returns what it returned.
    func run<T: Sendable>(_ body: @Sendable (SQLiteConnection) throws -> T) throws -> T {
        try body(connection)
    }
}
