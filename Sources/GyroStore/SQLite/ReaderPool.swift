import PosixThreads

/// Read-only connections of a WAL store, each on its own thread, opened as reads need them.
///
/// WAL lets each of them read its own snapshot while the writer commits. A read goes to an idle
/// reader, or a new one while there are fewer than `maximum`, or else queues behind the reader
/// with the fewest reads in flight. The publisher's outbox pass can hold a reader for seconds
/// (it blocks until the broker has room), so the others must stay available to the admin API
/// and capture.
final class ReaderPool: Sendable {
    private struct Reader {
        let connection: ConnectionActor
        var inFlight: Int
    }

    private struct State {
        var readers: [Reader] = []
        /// Readers being opened: counted against `maximum` before they exist.
        var opening = 0
    }

    private let open: @Sendable () throws(SQLiteError) -> SQLiteConnection
    private let maximum: Int
    private let state = LockedState(State())

    init(maximum: Int, open: @escaping @Sendable () throws(SQLiteError) -> SQLiteConnection) {
        self.maximum = max(1, maximum)
        self.open = open
    }

    /// Runs `body` in a read transaction on one of the readers.
    nonisolated(nonsending)
    func read<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        let (index, reader) = try checkOut()
        defer { state.withLock { $0.readers[index].inFlight -= 1 } }
        return try await reader.run { connection in try connection.transaction(.deferred) { try body(connection) } }
    }

    /// An idle reader, else a new one, else the least busy; counted as in flight until the read ends.
    private func checkOut() throws(SQLiteError) -> (Int, ConnectionActor) {
        enum Choice { case reader(Int, ConnectionActor), openNew }
        let choice = state.withLock { state -> Choice in
            let least = state.readers.indices.min { state.readers[$0].inFlight < state.readers[$1].inFlight }
            if let least, state.readers[least].inFlight == 0 || state.readers.count + state.opening >= maximum {
                state.readers[least].inFlight += 1
                return .reader(least, state.readers[least].connection)
            }
            state.opening += 1
            return .openNew
        }
        if case .reader(let index, let reader) = choice { return (index, reader) }
        // Opened outside the lock: opening reads the file header and schema.
        let reader: ConnectionActor
        do {
            reader = try ConnectionActor(owning: try open(), threadName: "store-reader")
        } catch {
            state.withLock { $0.opening -= 1 }
            throw error
        }
        let index = state.withLock { state in
            state.opening -= 1
            state.readers.append(Reader(connection: reader, inFlight: 1))
            return state.readers.count - 1
        }
        return (index, reader)
    }
}
