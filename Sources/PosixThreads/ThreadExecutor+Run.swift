#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

extension ThreadExecutor {
    /// The thread's loop: due timers, then the readable descriptors' handlers, then the queued
    /// jobs, turn after turn, sleeping in `poll` when there is nothing to do; until stopped and
    /// drained.
    func run() {
        threadID.store(pthread_self(), ordering: .relaxed)
        var watched = PollSet(wakeRead: wakeRead)
        var lastRead: UInt64 = 0
        var due: [@Sendable () -> Void] = []
        due.reserveCapacity(16)
        while true {
            // Timers first: the jobs they resume run in this turn. Also when jobs keep coming:
            // a busy thread must not starve its timers.
            let now = monotonicNanoseconds()
            let nextTimer = fireTimers(now: now, due: &due)
            let turn = takeTurn()
            if turn.stopping, turn.work.isEmpty {
                state.withLock { $0.timers = LoopTimers() }
                return
            }
            if turn.generation != watched.generation {
                watched.rebuild(from: state.withLock { $0.registrations }, generation: turn.generation)
            }
            // Paced: the descriptors are left unread until the interval since the last read is
            // over (the wake-up pipe is always watched).
            let resume = lastRead &+ turn.pace
            let paced = turn.pace > 0 && now < resume
            var wait = nextTimer.map { $0 > now ? $0 - now : 0 }
            if paced { wait = min(wait ?? .max, resume - now) }
            let timeout: Int32 = !turn.work.isEmpty ? 0 : wait.map { Int32(min(($0 + 999_999) / 1_000_000, 3_600_000)) } ?? -1
            let polled = paced ? 1 : watched.fds.count
            let ready = poll(&watched.fds, nfds_t(polled), timeout)
            if turn.work.isEmpty { state.withLock { $0.sleeping = false } }
            if ready == 0, paced, watched.allNonblocking, turn.work.isEmpty, resume <= nextTimer ?? .max {
                // The paced interval is over and nothing else woke the thread: read at once.
                lastRead = startRead()
                for index in watched.handlers.indices { callHandler(watched.handlers[index]) }
                readNumber.store(0, ordering: .relaxed)
            } else if ready > 0 {
                watched.drainWakeUps()
                if polled > 1, watched.fds[1...].contains(where: { $0.revents != 0 }) { lastRead = startRead() }
                for index in 1..<polled where watched.fds[index].revents != 0 { callHandler(watched.handlers[index - 1]) }
                readNumber.store(0, ordering: .relaxed)
            }
            runJobs(turn.work)
        }
    }

    /// What this turn takes from the shared state: the queued jobs (the thread is marked
    /// sleeping when there are none, so that a job queued meanwhile writes to the wake-up pipe),
    /// the registrations' generation, the read pacing and whether the thread is stopping.
    private func takeTurn() -> (work: [Work], generation: UInt64, pace: UInt64, stopping: Bool) {
        state.withLock { state in
            let work = state.queue
            if work.isEmpty {
                state.sleeping = !state.stopping
            } else {
                state.queue.removeAll(keepingCapacity: true)
            }
            return (work, state.generation, state.pacing.interval, state.stopping)
        }
    }

    /// Numbers a read of the descriptors (``currentRead``) and returns when it began.
    private func startRead() -> UInt64 {
        readNumber.store(readCount.add(1, ordering: .relaxed).newValue, ordering: .relaxed)
        return monotonicNanoseconds()
    }

    /// A handler may unregister others (a transport closing): those are skipped.
    private func callHandler(_ watched: (id: UInt64, handler: ReadableHandler)) {
        guard state.withLock({ $0.registrations[watched.id] != nil }) else { return }
        watched.handler()
    }

    /// Every job runs as both: the thread runs one job at a time, so a task-executor job
    /// (nonisolated code of a task that prefers this thread) may call into the actors of this
    /// thread without a hop, as their own jobs may.
    private func runJobs(_ work: [Work]) {
        let serial = asUnownedSerialExecutor(), task = asUnownedTaskExecutor()
        for item in work {
            switch item {
            case .job(let job): job.runSynchronously(isolatedTo: serial, taskExecutor: task)
            case .closure(let body): body()
            }
        }
    }
}

/// The descriptors the thread polls: the wake-up pipe first, then the registered ones in order
/// of registration, rebuilt when the registrations change.
struct PollSet {
    var generation = UInt64.max
    var fds: [pollfd]
    var handlers: [(id: UInt64, handler: ThreadExecutor.ReadableHandler)] = []
    var allNonblocking = false
    private let wakeRead: Int32
    private var drain = [UInt8](repeating: 0, count: 64)

    init(wakeRead: Int32) {
        self.wakeRead = wakeRead
        fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
    }

    mutating func rebuild(from registrations: [UInt64: ThreadExecutor.Registration], generation: UInt64) {
        self.generation = generation
        let sorted = registrations.sorted { $0.key < $1.key }
        handlers = sorted.map { ($0.key, $0.value.handler) }
        fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            + sorted.map { pollfd(fd: $0.value.descriptor, events: Int16(POLLIN), revents: 0) }
        allNonblocking = !sorted.isEmpty && sorted.allSatisfy(\.value.nonblocking)
    }

    /// Empties the wake-up pipe when it woke the poll.
    mutating func drainWakeUps() {
        guard fds[0].revents != 0 else { return }
        _ = read(wakeRead, &drain, drain.count)
    }
}
