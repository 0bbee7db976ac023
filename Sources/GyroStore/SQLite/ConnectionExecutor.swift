import CSQLite
import PosixThreads

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A serial executor that is one thread of its own: the executor of one connection's
/// ``ConnectionActor``.
///
/// Why a thread rather than the global executor: a commit waits for fsync (`synchronous =
/// FULL`), a retention pass can take seconds on a full disk, and the publisher's outbox pass
/// blocks inside its read until the broker has room (up to its patience). None of that may hold
/// one of the few threads of Swift's cooperative pool. A call costs one wake-up of this thread
/// and one of the caller's executor, as GRDB's dispatch queues did; jobs arrive through the
/// runtime's executor protocol, with no continuation of our own to resume.
final class ConnectionExecutor: SerialExecutor, Sendable {
    private let queue = JobQueue()
    private let thread: pthread_t

    /// - parameter name: the thread's name (`store-writer`, `store-reader`).
    init(name: String) throws(SQLiteError) {
        let queue = self.queue
        let body = Unmanaged.passRetained(ThreadBody(queue: queue, name: name))
        var thread = pthread_t()
        let code = pthread_create(&thread, nil, { argument in
            Unmanaged<ThreadBody>.fromOpaque(argument!).takeRetainedValue().start()
            return nil
        }, body.toOpaque())
        guard code == 0 else {
            body.release()
            throw SQLiteError(code: SQLITE_NOMEM, message: "cannot start a thread for a store connection (error \(code))")
        }
        self.thread = thread
        queue.executor = self.asUnownedSerialExecutor()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        queue.submit(UnownedJob(job))
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets the queued jobs run, then ends the thread; waits for that unless called on it.
    func stop() {
        queue.stop()
        if pthread_equal(pthread_self(), thread) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }
}

/// The jobs waiting for the executor's thread.
///
/// Unchecked Sendable: `jobs` and `stopping` are only touched under `mutex`; `executor` is set
/// once, before any job can be submitted.
private final class JobQueue: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [UnownedJob] = []
    private var stopping = false
    var executor: UnownedSerialExecutor?

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func submit(_ job: UnownedJob) {
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

    /// The thread's loop: runs jobs in order until stopped and drained.
    func run() {
        while true {
            pthread_mutex_lock(mutex)
            while jobs.isEmpty && !stopping { pthread_cond_wait(condition, mutex) }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            let executor = self.executor
            pthread_mutex_unlock(mutex)
            guard let executor, !batch.isEmpty else { return }
            for job in batch { job.runSynchronously(on: executor) }
        }
    }
}

/// What a new thread runs: the queue's loop.
private final class ThreadBody {
    let queue: JobQueue
    let name: String

    init(queue: JobQueue, name: String) {
        self.queue = queue
        self.name = name
    }

    func start() {
        DetachedThread.nameCurrentThread(name)
        queue.run()
    }
}
