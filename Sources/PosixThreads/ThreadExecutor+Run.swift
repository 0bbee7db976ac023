#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension ThreadExecutor {
    /// The thread's loop: due timers, then the readable descriptors' handlers, then the queued
    /// jobs, turn after turn, sleeping in `poll` when there is nothing to do; until stopped and
    /// drained.
    func run() {
        threadID.store(pthread_self(), ordering: .relaxed)
        let serial = asUnownedSerialExecutor(), task = asUnownedTaskExecutor()
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
            // Timers first: the jobs they resume run in this turn. Also when jobs keep coming:
            // a busy thread must not starve its timers.
            let now = monotonicNanoseconds()
            let nextTimer = fireTimers(now: now, due: &due)
            let (work, current, pace, stopping) = state.withLock { state -> ([Work], UInt64, UInt64, Bool) in
                let work = state.queue
                if work.isEmpty {
                    state.sleeping = !state.stopping
                } else {
                    state.queue.removeAll(keepingCapacity: true)
                }
                return (work, state.generation, state.pacing.interval, state.stopping)
            }
            if stopping, work.isEmpty {
                state.withLock { $0.timers = LoopTimers() }
                return
            }
            if current != generation {
                generation = current
                let registrations = state.withLock { $0.registrations }.sorted { $0.key < $1.key }
                watched = registrations.map { ($0.key, $0.value.handler) }
                fds = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
                    + registrations.map { pollfd(fd: $0.value.descriptor, events: Int16(POLLIN), revents: 0) }
                allNonblocking = !registrations.isEmpty && registrations.allSatisfy(\.value.nonblocking)
            }
            // Paced: the descriptors are left unread until the interval since the last read is
            // over (the wake-up pipe is always watched).
            let resume = lastRead &+ pace
            let paced = pace > 0 && now < resume
            var wait = nextTimer.map { $0 > now ? $0 - now : 0 }
            if paced { wait = min(wait ?? .max, resume - now) }
            let timeout: Int32 = !work.isEmpty ? 0 : wait.map { Int32(min(($0 + 999_999) / 1_000_000, 3_600_000)) } ?? -1
            let ready = poll(&fds, nfds_t(paced ? 1 : fds.count), timeout)
            if work.isEmpty { state.withLock { $0.sleeping = false } }
            if ready == 0, paced, allNonblocking, work.isEmpty, resume <= nextTimer ?? .max {
                // The paced interval is over and nothing else woke the thread: read at once.
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
                if fds[0].revents != 0 { _ = read(wakeRead, &drain, drain.count) }
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
            // Every job runs as both: the thread runs one job at a time, so a task-executor job
            // (nonisolated code of a task that prefers this thread) may call into the actors of
            // this thread without a hop, as their own jobs may.
            for item in work {
                switch item {
                case .job(let job): job.runSynchronously(isolatedTo: serial, taskExecutor: task)
                case .closure(let body): body()
                }
            }
        }
    }
}
