import CSQLite

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A connection and the thread that owns it: work for the connection is queued here and runs
/// on that thread, one job at a time, in order. Releasing the last reference lets the queued
/// jobs finish, closes the connection and ends the thread.
///
/// Why a thread of its own rather than an actor on the global executor: a commit waits for
/// fsync (`synchronous = FULL`), a retention pass can take seconds on a full disk, and the
/// publisher's outbox pass blocks inside its read until the broker has room (up to its
/// patience). None of that may hold one of the few threads of Swift's cooperative pool. A job
/// costs one wake-up of this thread and one resumption of the caller, as GRDB's queues did.
final class ConnectionThread: Sendable {
    private let queue: JobQueue
    private let thread: pthread_t

    /// Starts the thread that owns `connection` from now on.
    init(owning connection: SQLiteConnection) throws(SQLiteError) {
        let queue = JobQueue(connection)
        let body = Unmanaged.passRetained(ThreadBody(queue: queue))
        var thread = pthread_t()
        let code = pthread_create(&thread, nil, { argument in
            Unmanaged<ThreadBody>.fromOpaque(argument!).takeRetainedValue().start()
            return nil
        }, body.toOpaque())
        guard code == 0 else {
            body.release()
            throw SQLiteError(code: SQLITE_NOMEM, message: "cannot start a thread for \(connection.path) (error \(code))")
        }
        self.queue = queue
        self.thread = thread
    }

    deinit {
        queue.stop()
        // The last reference can go on the thread itself (a job's closure held it): it then
        // ends after that job, and nobody waits for it.
        if pthread_equal(pthread_self(), thread) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    /// Runs `body` with the connection on its thread and returns what it returned.
    func run<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await withUnsafeThrowingContinuation { continuation in
            queue.submit { connection in continuation.resume(with: Result { try body(connection) }) }
        }
    }
}

/// The jobs waiting for one connection's thread.
///
/// Unchecked Sendable: `jobs` and `stopping` are only touched under `mutex`, and `connection`
/// only by the thread, once `ConnectionThread.init` has handed it over.
private final class JobQueue: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [(SQLiteConnection) -> Void] = []
    private var stopping = false
    private var connection: SQLiteConnection?

    init(_ connection: SQLiteConnection) {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
        self.connection = connection
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func submit(_ job: @escaping (SQLiteConnection) -> Void) {
        pthread_mutex_lock(mutex)
        jobs.append(job)
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    func stop() {
        pthread_mutex_lock(mutex)
        stopping = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// The thread's loop: runs jobs until stopped and drained, then closes the connection.
    func run() {
        guard let connection else { return }
        while true {
            pthread_mutex_lock(mutex)
            while jobs.isEmpty && !stopping { pthread_cond_wait(condition, mutex) }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            pthread_mutex_unlock(mutex)
            if batch.isEmpty { break }
            for job in batch { job(connection) }
        }
        self.connection = nil
    }
}

/// What a new thread runs: the queue's loop.
private final class ThreadBody {
    let queue: JobQueue

    init(queue: JobQueue) { self.queue = queue }

    func start() { queue.run() }
}
