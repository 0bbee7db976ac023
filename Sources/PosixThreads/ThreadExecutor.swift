#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// A serial executor that is one thread of its own: it runs its actors' jobs, its timers, and the
/// handlers of the descriptors registered with it, one at a time, on that thread.
///
/// Why a thread rather than the global executor: its jobs may block (a SQLite commit waits for
/// fsync, a retention pass can take seconds on a full disk) and must not hold one of the few
/// threads of Swift's cooperative pool. Actors that share it (their `unownedExecutor`) call one
/// another synchronously, without a hop, and whatever wakes one of them wakes this thread only.
///
/// Why it also reads descriptors: the data plane's thread is the reader of the HCI transports
/// and the executor of every actor on a notification's way (the BLE host, the MetaWear boards,
/// their supervisors). A notification is framed, reassembled, parsed, decoded, timestamped and
/// gap-checked by synchronous calls on the thread that read it, with no task hop, no thread
/// wake-up and no queue in between; control work on the same actors (connects, GATT requests,
/// timers) arrives as ordinary jobs on the same thread, so packet handling and control never race.
/// A swift-nio event loop is built the same way; NIO's bootstraps do not take the Bluetooth
/// socket or a tty, so this is the smallest loop that does. Nothing run on the data plane may
/// block for long: SQLite commits and MQTT happen on another executor of this type.
///
/// Why timers of its own (``schedule(after:tolerance:alarm:_:)``): a task that sleeps
/// (`Task.sleep`) arms a dispatch timer, so every alarm costs a wake-up of libdispatch's manager
/// thread and one of a pool thread before the sleeper's actor runs. Here the thread sleeps in
/// `poll` until the next deadline and runs the timer itself, at a wake-up it makes anyway when
/// the timer's tolerance allows.
///
/// Why a task executor too: a task that prefers it (`withTaskExecutorPreference`) is resumed
/// here when a continuation it waits on is resumed (an `AsyncStream` it consumes, say). Without
/// the preference a continuation resumes on the global executor, and the task hops from a
/// dispatch worker back to this thread: two wake-ups instead of one, or none when the resume
/// happens on this thread.
public final class ThreadExecutor: SerialExecutor, TaskExecutor, Sendable {
    public enum StartError: Error, Sendable, CustomStringConvertible {
        /// `pthread_create` refused (its error code, EAGAIN when the system has no thread to give).
        case noThread(code: Int32)
        /// The wake-up pipe could not be made (errno; EMFILE when the process is out of descriptors).
        case noPipe(code: Int32)

        public var description: String {
            switch self {
            case let .noThread(code): "the executor's thread could not be created (pthread_create: \(code)); raise the process's thread limit"
            case let .noPipe(code): "the executor's wake-up pipe could not be created (errno \(code)); raise the descriptor limit"
            }
        }
    }

    /// Called on the thread when a registered descriptor is readable (or hung up).
    public typealias ReadableHandler = @Sendable () -> Void

    enum Work {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    struct Registration {
        var descriptor: Int32
        var handler: ReadableHandler
        /// `O_NONBLOCK` when registered: its handler may be called when nothing is there.
        var nonblocking: Bool
    }

    struct State {
        var queue: [Work] = []
        var sleeping = false
        var stopping = false
        var registrations: [UInt64: Registration] = [:]
        var nextRegistration: UInt64 = 0
        /// Bumped on every change of `registrations`, so the thread rebuilds its poll set.
        var generation: UInt64 = 0
        var timers = LoopTimers()
        var pacing = ReadPacing()
    }

    /// A pthread mutex rather than `Synchronization.Mutex`: ThreadSanitizer sees it (LockedState).
    let state = LockedState(State())
    let wakeRead: Int32
    let wakeWrite: Int32
    let threadID = Atomic<UInt>(0)
    let readNumber = Atomic<UInt64>(0)
    /// Reads of the descriptors so far (only the thread itself counts them).
    let readCount = Atomic<UInt64>(0)
    /// The joinable thread, for ``stop()``.
    private let handle = LockedState<pthread_t?>(nil)

    /// Starts the thread; it runs until ``stop()``.
    /// - parameter name: the thread's name (Linux keeps the first 15 bytes).
    public init(name: String) throws(StartError) {
        var fds: [Int32] = [-1, -1]
        // `pipe2` needs _GNU_SOURCE, which Glibc's module lacks: the flags are set after.
        guard pipe(&fds) == 0 else { throw .noPipe(code: errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        let body = Unmanaged.passRetained(ThreadBody(executor: self, name: name))
        var thread = pthread_t()
        let code = pthread_create(&thread, nil, { argument in
            Unmanaged<ThreadBody>.fromOpaque(argument!).takeRetainedValue().start()
            return nil
        }, body.toOpaque())
        guard code == 0 else {
            body.release()
            throw .noThread(code: code)
        }
        handle.withLock { $0 = thread }
    }

    deinit {
        // Only once the thread has ended (it holds the executor while it runs): nothing writes now.
        close(wakeRead)
        close(wakeWrite)
    }

    // MARK: - Executor

    public func enqueue(_ job: consuming ExecutorJob) {
        submit(.job(UnownedJob(job)))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }

    public func checkIsolated() {
        precondition(isCurrent, "not on the executor's thread")
    }

    public func isIsolatingCurrentContext() -> Bool? { isCurrent }

    /// Whether the caller runs on this executor's thread.
    public var isCurrent: Bool { pthread_self() == threadID.load(ordering: .relaxed) }

    /// Numbers the thread's reads of its descriptors while their handlers run (0 outside them).
    /// What one read brings arrived together: a receiver that stamps arrivals reads the clock
    /// once per read (`MetaWearBoard`), not once per notification.
    public var currentRead: UInt64 { readNumber.load(ordering: .relaxed) }

    /// Runs `body` on the thread, after the work queued before it.
    public func execute(_ body: @escaping @Sendable () -> Void) {
        submit(.closure(body))
    }

    func submit(_ work: Work) {
        let wake = state.withLock { state -> Bool in
            state.queue.append(work)
            defer { state.sleeping = false }
            return state.sleeping
        }
        if wake { self.wake() }
    }

    func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    /// Lets the queued jobs run, then ends the thread (timers not yet due are dropped); waits
    /// for that unless called on it.
    public func stop() {
        state.withLock { $0.stopping = true }
        wake()
        guard let thread = handle.withLock({ state -> pthread_t? in
            defer { state = nil }
            return state
        }) else { return }
        if isCurrent {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }
}

/// What the new thread runs: the executor's loop. Holds the executor until the loop ends.
private final class ThreadBody {
    let executor: ThreadExecutor
    let name: String

    init(executor: ThreadExecutor, name: String) {
        self.executor = executor
        self.name = name
    }

    func start() {
        DetachedThread.nameCurrentThread(name)
        executor.run()
    }
}

/// CLOCK_MONOTONIC in nanoseconds, the timers' clock.
func monotonicNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}
