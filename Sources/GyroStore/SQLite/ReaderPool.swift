import Synchronization

/// Read-only connections of a WAL store, each on its own thread, opened as reads need them.
///
/// WAL lets each of them read its own snapshot while the writer commits. A read goes to an idle
/// reader, or a new one while there are fewer than `maximum`, or else queues behind the reader
/// with the fewest reads in flight. The publisher's outbox pass can hold a reader for seconds
/// (it blocks until the broker has room), so the others must stay available to the admin API
/// and capture.
final class ReaderPool: Sendable {
    private struct Reader {
        let connection: ConnectionThread
        var inFlight: Int
    }

    private let open: @Sendable () throws(SQLiteError) -> SQLiteConnection
    private let maximum: Int
    private let readers = Mutex<[Reader]>([])

    init(maximum: Int, open: @escaping @Sendable () throws(SQLiteError) -> SQLiteConnection) {
        self.maximum = max(1, maximum)
        self.open = open
    }

    /// Runs `body` in a read transaction on one of the readers.
    func read<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        let index = try checkOut()
        let reader = readers.withLock { $0[index].connection }
        defer { readers.withLock { $0[index].inFlight -= 1 } }
        return try await reader.run { connection in try connection.transaction(.deferred) { try body(connection) } }
    }

    private func checkOut() throws(SQLiteError) -> Int {
        let chosen: Int? = readers.withLock { readers in
            guard let index = readers.indices.min(by: { readers[$0].inFlight < readers[$1].inFlight }),
                  readers[index].inFlight == 0 || readers.count >= maximum
            else { return nil }
            readers[index].inFlight += 1
            return index
        }
        if let chosen { return chosen }
        // Opened outside the lock: opening reads the file header and schema.
        let connection = try ConnectionThread(owning: try open())
        return readers.withLock { readers in
            readers.append(Reader(connection: connection, inFlight: 1))
            return readers.count - 1
        }
    }
}
