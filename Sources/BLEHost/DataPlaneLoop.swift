import CHCISocket
import Glibc
import PosixThreads
import Synchronization

/// The data plane's thread: it reads the HCI transports' descriptors and runs, as a serial
/// executor, every actor on the path of a notification (the BLE host, the MetaWear boards and
/// their supervisors).
///
/// Why one thread that is both the reader and the executor: a notification is framed,
/// reassembled, parsed, decoded, timestamped and gap-checked by synchronous calls on the thread
/// that read it (`assumeIsolated` into each actor), with no task hop, no thread wake-up and no
/// queue in between. Control work on the same actors (connects, GATT requests, timers) arrives
/// as ordinary jobs on the same thread, so packet handling and control never race, and
/// awaiting one of these actors from another is a switch on the same thread, not a wake-up.
/// A swift-nio event loop is built the same way; NIO's bootstraps do not take the Bluetooth
/// socket or a tty, so this is the smallest loop that does.
///
/// Nothing run here may block for long: SQLite commits and MQTT happen elsewhere, and the
/// capture engine takes samples in batches (``Capture/CaptureFeed``).
///
/// Timers (``schedule(after:tolerance:alarm:_:)``) fire on the same thread, at a wake-up the loop
/// makes for a notification anyway when their tolerance allows: a sensor's watchdog then costs
/// neither a thread of the global executor nor a wake-up of its own.
public final class DataPlaneLoop: SerialExecutor, Sendable {
    /// The process's data plane. The gateway has one controller at a time; tests share it too.
    public static let shared = DataPlaneLoop()

    /// Called on the loop's thread when a registered descriptor is readable (or hung up).
    public typealias ReadableHandler = @Sendable () -> Void

    private enum Work {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private struct Registration {
        var descriptor: Int32
        var handler: ReadableHandler
        /// `O_NONBLOCK` when registered: its handler may be called when nothing is there.
        var nonblocking: Bool
    }

    private struct State {
        var queue: [Work] = []
        var sleeping = false
        var registrations: [UInt64: Registration] = [:]
        var nextRegistration: UInt64 = 0
        /// Bumped on every change of `registrations`, so the thread rebuilds its poll set.
        var generation: UInt64 = 0
        var timers = LoopTimers()
        var pacing = ReadPacing()
    }

    private let state = Mutex(State())
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let thread = Atomic<UInt>(0)
    private let readNumber = Atomic<UInt64>(0)

    /// Starts the loop's thread; it runs for the life of the process.
    public init() {
        var fds: [Int32] = [-1, -1]
        let piped = chci_pipe(&fds)
        precondition(piped == 0, "the data plane cannot start without a wake-up pipe (errno \(errno))")
        wakeRead = fds[0]
        wakeWrite = fds[1]
        let started = DetachedThread.start(name: "ble-data-plane") { [self] in self.run() }
        precondition(started, "the data plane's thread could not be created")
    }

    // MARK: - Executor

    public func enqueue(_ job: consuming ExecutorJob) {
        submit(.job(UnownedJob(job)))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() {
        precondition(inLoop, "not on the data plane's thread")
    }

    public func isIsolatingCurrentContext() -> Bool? { inLoop }

    /// Numbers the loop's reads of its transports while their handlers run (0 outside them).
    /// What one read brings arrived together: a receiver that stamps arrivals reads the clock
    /// once per read (`MetaWearBoard`), not once per notification.
    public var currentRead: UInt64 { readNumber.load(ordering: .relaxed) }

    /// Whether the caller runs on the loop's thread.
    public var inLoop: Bool { pthread_self() == thread.load(ordering: .relaxed) }

    /// Runs `body` on the loop's thread, after the work queued before it.
    public func execute(_ body: @escaping @Sendable () -> Void) {
        submit(.closure(body))
    }

    private func submit(_ work: Work) {
        let wake = state.withLock { state -> Bool in
            state.queue.append(work)
            defer { state.sleeping = false }
            return state.sleeping
        }
        if wake {
            var byte: UInt8 = 1
            _ = Glibc.write(wakeWrite, &byte, 1)
        }
    }

    // MARK: - Timers

    /// Names one timer, so that another job can fire it early.
    public struct Alarm: Sendable, Hashable {
        let id: UInt64
    }

    public func makeAlarm() -> Alarm {
        Alarm(id: state.withLock { $0.timers.makeAlarm() })
    }

    /// Calls `body` on the loop's thread once `seconds` have passed, or up to `tolerance` later
    /// so that it runs at a wake-up the loop makes anyway, or at once on ``ring(_:)``. An alarm
    /// serves one timer; one rung before it is scheduled runs `body` at once, on the caller.
    ///
    /// A callback and not an `async` sleep: a continuation resumed here would go through the
    /// global executor before it got back to an actor on this loop.
    public func schedule(after seconds: Double, tolerance: Double, alarm: Alarm, _ body: @escaping @Sendable () -> Void) {
        let deadline = monotonicNanoseconds() + UInt64(max(0, min(seconds, 1e6)) * 1e9)
        let latest = deadline + UInt64(max(0, min(tolerance, 1e6)) * 1e9)
        let armed = state.withLock { state in
            state.timers.schedule(alarm.id, LoopTimers.Timer(deadline: deadline, latest: latest, fire: body))
        }
        if !armed {
            body()
        } else if !inLoop {
            execute {}  // a sleeping loop recomputes its timeout
        }
    }

    /// Drops `alarm`'s timer without firing it (a request answered before its timeout). No
    /// wake-up: a loop that sleeps until the dropped deadline finds nothing due then.
    public func cancel(_ alarm: Alarm) {
        state.withLock { $0.timers.cancel(alarm.id) }
    }

    /// Fires `alarm`'s timer now, on the caller's thread (or as soon as it is scheduled).
    public func ring(_ alarm: Alarm) {
        let fire = state.withLock { $0.timers.ring(alarm.id) }
        fire?()
    }

    /// Fires the timers that are due; returns when the next one must fire at the latest.
    /// `due` is the thread's buffer for their bodies, reused from turn to turn.
    private func fireTimers(now: UInt64, due: inout [@Sendable () -> Void]) -> UInt64? {
        let next = state.withLock { state in
            state.timers.takeDue(now: now, into: &due)
            return state.timers.nextLatest()
        }
        guard !due.isEmpty else { return next }
        for fire in due { fire() }
        due.removeAll(keepingCapacity: true)
        // A timer may have set another one (a watchdog re-arming itself): include it.
        return state.withLock { $0.timers.nextLatest() }
    }

    func withPacing<T>(_ body: (inout ReadPacing) -> T) -> T { state.withLock { body(&$0.pacing) } }

    // MARK: - Descriptors

    /// Calls `handler` on the loop's thread whenever `descriptor` is readable, until
    /// ``unregister(_:)``. The handler reads what is there; the descriptor stays the caller's.
    ///
    /// A descriptor that is `O_NONBLOCK` when registered is also read, without a poll, when a
    /// paced interval ends (its handler then may find nothing): a paced wake-up is then one
    /// `poll` that times out and the reads, not a second `poll` to learn what the read tells.
    public func register(_ descriptor: Int32, handler: @escaping ReadableHandler) -> UInt64 {
        let id = state.withLock { state -> UInt64 in
            state.nextRegistration += 1
            let flags = fcntl(descriptor, F_GETFL)
            state.registrations[state.nextRegistration] = Registration(descriptor: descriptor, handler: handler,
                                                                       nonblocking: flags >= 0 && flags & O_NONBLOCK != 0)
            state.generation += 1
            return state.nextRegistration
        }
        execute {}  // wakes a sleeping poll so that it includes the descriptor
        return id
    }

    /// Stops watching a descriptor. On the loop's thread, no handler of it runs after this
    /// returns; from elsewhere, one already running may finish.
    public func unregister(_ id: UInt64) {
        state.withLock { state in
            if state.registrations.removeValue(forKey: id) != nil { state.generation += 1 }
        }
        execute {}
    }

    // MARK: - The thread

    private func run() {
        thread.store(pthread_self(), ordering: .relaxed)
        var generation = UInt64.max
        var watched: [(id: UInt64, handler: ReadableHandler)] = []
        var fds: [pollfd] = []
        var allNonblocking = false
        var drain = [UInt8](repeating: 0, count: 64)
        var lastRead: UInt64 = 0
        var reads: UInt64 = 0
        var due: [@Sendable () -> Void] = []
        due.reserveCapacity(16)
        while true {
            // Timers first: the jobs they resume run in this turn.
            let now = monotonicNanoseconds()
            let nextTimer = fireTimers(now: now, due: &due)
            let (work, current, pace) = state.withLock { state -> ([Work], UInt64, UInt64) in
                let work = state.queue
                if work.isEmpty {
                    state.sleeping = true
                } else {
                    state.queue.removeAll(keepingCapacity: true)
                }
                return (work, state.generation, state.pacing.interval)
            }
            if current != generation {
                generation = current
                let registrations = state.withLock { $0.registrations }
                watched = registrations.sorted { $0.key < $1.key }.map { ($0.key, $0.value.handler) }
                fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
                    + registrations.sorted { $0.key < $1.key }.map { pollfd(fd: $0.value.descriptor, events: Int16(POLLIN), revents: 0) }
                allNonblocking = !registrations.isEmpty && registrations.values.allSatisfy(\.nonblocking)
            }
            // Paced: the transports are left unread until the interval since the last read is over
            // (the wake-up pipe is always watched).
            let resume = lastRead &+ pace
            let paced = pace > 0 && now < resume
            var wait = nextTimer.map { $0 > now ? $0 - now : 0 }
            if paced { wait = min(wait ?? .max, resume - now) }
            let timeout: Int32 = !work.isEmpty ? 0 : wait.map { Int32(min(($0 + 999_999) / 1_000_000, 3_600_000)) } ?? -1
            let ready = poll(&fds, nfds_t(paced ? 1 : fds.count), timeout)
            if work.isEmpty { state.withLock { $0.sleeping = false } }
            if ready == 0, paced, allNonblocking, work.isEmpty, resume <= nextTimer ?? .max {
                // The paced interval is over and nothing else woke the loop: read at once.
                lastRead = monotonicNanoseconds()
                reads += 1
                readNumber.store(reads, ordering: .relaxed)
                for index in watched.indices {
                    let id = watched[index].id
                    guard state.withLock({ $0.registrations[id] != nil }) else { continue }
                    watched[index].handler()
                }
                readNumber.store(0, ordering: .relaxed)
            } else if ready > 0 {
                if fds[0].revents != 0 { _ = Glibc.read(wakeRead, &drain, drain.count) }
                let polled = paced ? 1 : fds.count
                if polled > 1, fds[1...].contains(where: { $0.revents != 0 }) {
                    lastRead = monotonicNanoseconds()
                    reads += 1
                    readNumber.store(reads, ordering: .relaxed)
                }
                for index in 1..<polled where fds[index].revents != 0 {
                    let id = watched[index - 1].id
                    // A handler may unregister others (a transport closing): skip those.
                    guard state.withLock({ $0.registrations[id] != nil }) else { continue }
                    watched[index - 1].handler()
                }
                readNumber.store(0, ordering: .relaxed)
            }
            for item in work {
                switch item {
                case .job(let job): job.runSynchronously(on: asUnownedSerialExecutor())
                case .closure(let body): body()
                }
            }
        }
    }
}

/// CLOCK_MONOTONIC in nanoseconds, the timers' clock.
private func monotonicNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}
