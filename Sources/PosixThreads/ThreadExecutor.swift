#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A serial executor that is one thread of its own, with timers that ring on that thread.
///
/// Why a thread rather than the global executor: its jobs may block (a SQLite commit waits for
/// fsync, a retention pass can take seconds on a full disk) and must not hold one of the few
/// threads of Swift's cooperative pool. Actors that share it (their `unownedExecutor`) call one
/// another synchronously, without a hop, and whatever wakes one of them wakes this thread only.
///
/// Why timers of its own: a task that sleeps (`Task.sleep`) arms a dispatch timer, so every
/// alarm costs a wake-up of libdispatch's manager thread and one of a pool thread before the
/// sleeper's actor runs. Here the thread waits on its condition until the next deadline and
/// runs the alarm's action itself.
///
/// Why a task executor too: a task that prefers it (`withTaskExecutorPreference`) is resumed
/// here when a continuation it waits on is resumed (an `AsyncStream` it consumes, say). Without
/// the preference a continuation resumes on the global executor, and the task hops from a
/// dispatch worker back to this thread: two wake-ups instead of one, or none when the resume
/// happens on this thread.
public final class ThreadExecutor: SerialExecutor, TaskExecutor, Sendable {
    public enum StartError: Error, Sendable {
        /// `pthread_create` refused (its error code, EAGAIN when the system has no thread to give).
        case noThread(code: Int32)
    }

    /// A scheduled action, to cancel it.
    public struct Alarm: Sendable, Hashable {
        fileprivate let id: UInt64
    }

    private let queue: JobQueue
    private let thread: pthread_t

    /// - parameter name: the thread's name (Linux keeps the first 15 bytes).
    public init(name: String) throws(StartError) {
        let queue = JobQueue()
        self.queue = queue
        let body = Unmanaged.passRetained(ThreadBody(queue: queue, name: name))
        var thread = pthread_t()
        let code = pthread_create(&thread, nil, { argument in
            Unmanaged<ThreadBody>.fromOpaque(argument!).takeRetainedValue().start()
            return nil
        }, body.toOpaque())
        guard code == 0 else {
            body.release()
            throw .noThread(code: code)
        }
        self.thread = thread
        queue.setExecutors(serial: asUnownedSerialExecutor(), task: asUnownedTaskExecutor())
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        queue.submit(UnownedJob(job))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    /// Whether the caller runs on this executor's thread.
    private var isCurrent: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Runs `action` on this thread once `deadline` has passed (never before it), unless
    /// cancelled first. `action` runs outside any job, so it must not touch actor state: it
    /// resumes or signals whoever waits (an `AsyncStream`'s continuation, say); a task that
    /// prefers this executor then goes on here without waking another thread.
    @discardableResult
    public func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> Alarm {
        queue.schedule(at: deadline, action)
    }

    /// Cancels `alarm` if it has not rung; its action will not run.
    public func cancel(_ alarm: Alarm) {
        queue.cancel(alarm)
    }

    /// Lets the queued jobs run, then ends the thread (alarms not yet due are dropped); waits
    /// for that unless called on it.
    public func stop() {
        queue.stop()
        if isCurrent {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }
}

/// The jobs and alarms waiting for the executor's thread.
///
/// Unchecked Sendable: every stored property is only touched holding `condition`'s lock.
private final class JobQueue: @unchecked Sendable {
    private struct Timer {
        let id: UInt64
        let deadline: ContinuousClock.Instant
        let action: @Sendable () -> Void
    }

    private let condition = PosixCondition()
    private var jobs: [UnownedJob] = []
    /// Few at a time (a committer's alarms, a publisher's timeouts): a list beats a heap.
    private var timers: [Timer] = []
    private var nextTimerId: UInt64 = 0
    private var stopping = false
    private var executors: (serial: UnownedSerialExecutor, task: UnownedTaskExecutor)?

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    func setExecutors(serial: UnownedSerialExecutor, task: UnownedTaskExecutor) {
        locked { executors = (serial, task) }
    }

    func submit(_ job: UnownedJob) {
        locked {
            jobs.append(job)
            condition.broadcast()
        }
    }

    func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> ThreadExecutor.Alarm {
        locked {
            nextTimerId &+= 1
            timers.append(Timer(id: nextTimerId, deadline: deadline, action: action))
            // The thread may be waiting for a later deadline: it looks again. (No waiter, no system call.)
            condition.broadcast()
            return ThreadExecutor.Alarm(id: nextTimerId)
        }
    }

    /// No wake-up: at worst the thread wakes at the cancelled deadline and finds nothing due.
    func cancel(_ alarm: ThreadExecutor.Alarm) {
        locked { timers.removeAll { $0.id == alarm.id } }
    }

    func stop() {
        locked {
            stopping = true
            condition.broadcast()
        }
    }

    /// The thread's loop: runs due alarms and jobs in order until stopped and drained.
    func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !stopping {
                guard let next = timers.lazy.map(\.deadline).min() else {
                    condition.wait()
                    continue
                }
                let now = ContinuousClock.now
                if next <= now { break }
                _ = condition.wait(until: .after(now.duration(to: next)))
            }
            let batch = jobs
            jobs.removeAll(keepingCapacity: true)
            if stopping { timers.removeAll() }
            // Also when jobs keep coming: a busy thread must not starve its alarms.
            let due = timers.isEmpty ? [] : takeDue(ContinuousClock.now)
            let executors = self.executors
            condition.unlock()
            guard let executors, !batch.isEmpty || !due.isEmpty else { return }
            for action in due { action() }
            // Every job runs as both: the thread runs one job at a time, so a task-executor job
            // (nonisolated code of a task that prefers this thread) may call into the actors of
            // this thread without a hop, as their own jobs may.
            for job in batch { job.runSynchronously(isolatedTo: executors.serial, taskExecutor: executors.task) }
        }
    }

    private func takeDue(_ now: ContinuousClock.Instant) -> [@Sendable () -> Void] {
        var due: [@Sendable () -> Void] = []
        timers.removeAll { timer in
            guard timer.deadline <= now else { return false }
            due.append(timer.action)
            return true
        }
        return due
    }
}

/// What the new thread runs: the queue's loop.
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
