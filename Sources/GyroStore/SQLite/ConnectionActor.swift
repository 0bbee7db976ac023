import CSQLite
import PosixThreads

/// The one owner of a connection: work on it runs on the actor's own thread
/// (``ThreadExecutor``), one call at a time. Releasing the actor closes the connection and
/// ends the thread.
actor ConnectionActor {
    private let connection: SQLiteConnection
    /// The writer's sample ring; `nil` on a connection that does not write it.
    private var ring: SampleRing?
    nonisolated let executor: ThreadExecutor

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Takes over `connection`: nothing else may use it from now on.
    init(owning connection: sending SQLiteConnection, ring: SampleRing? = nil, threadName: String) throws(SQLiteError) {
        self.connection = connection
        self.ring = ring
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

    /// Runs `body` with the connection and a copy of the sample ring's state, which replaces
    /// the ring's state only when `body` returns: a transaction rolled back leaves it as it was.
    func run<T: Sendable>(withRing body: @Sendable (SQLiteConnection, inout SampleRing) throws -> T) throws -> T {
        guard var copy = ring else { throw SQLiteError(code: SQLITE_MISUSE, message: "this connection has no sample ring") }
        let result = try body(connection, &copy)
        ring = copy
        return result
    }
}
