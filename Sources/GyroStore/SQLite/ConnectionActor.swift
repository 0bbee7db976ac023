/// The one owner of a connection: work on it runs on the actor's own thread
/// (``ConnectionExecutor``), one call at a time. Releasing the actor closes the connection and
/// ends the thread.
actor ConnectionActor {
    private let connection: SQLiteConnection
    private nonisolated let executor: ConnectionExecutor

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Takes over `connection`: nothing else may use it from now on.
    init(owning connection: sending SQLiteConnection, threadName: String) throws(SQLiteError) {
        self.connection = connection
        self.executor = try ConnectionExecutor(name: threadName)
    }

    deinit { executor.stop() }

    /// Runs `body` with the connection on the actor's thread and returns what it returned.
    func run<T: Sendable>(_ body: @Sendable (SQLiteConnection) throws -> T) throws -> T {
        try body(connection)
    }
}
