import Capture
import FoundationEssentials
import GyroStore
import Logging
import PosixThreads
import ServiceLifecycle

/// Sends `WATCHDOG=1` at half of `$WATCHDOG_USEC`, but only while the pipeline makes progress,
/// and a `STATUS=` line at each check.
///
/// Progress, checked each interval: the store answers a read, commits are not failing, and
/// capture is either idle by design (no open session, or nothing waiting to be committed) or
/// its commit counter advanced since the last check. An open session whose uncommitted samples
/// are older than `stallAfter` while no commit happened is a stall, as are commits that fail
/// with none succeeding: keep-alives stop and systemd restarts the gateway after `WatchdogSec`.
/// A full disk is the exception: the status says `store: full (…)` and keep-alives go on; so
/// does a store at `retention.maxStoreBytes` (`store: at limit (…)`).
///
/// Test hook: when `$GYROGATE_TEST_STALL_FILE` names a file that exists, the check fails, so
/// tests can prove that keep-alives stop without breaking the store.
public struct WatchdogService: Service {
    let notifier: SystemdNotifier
    let store: GyroStore
    let engine: CaptureEngine
    let logger: Logger
    let stallAfter: Duration
    let stallFile: String?

    public init(notifier: SystemdNotifier, store: GyroStore, engine: CaptureEngine, logger: Logger, stallAfter: Duration = .seconds(10),
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.notifier = notifier
        self.store = store
        self.engine = engine
        self.logger = logger
        self.stallAfter = stallAfter
        self.stallFile = environment["GYROGATE_TEST_STALL_FILE"]
    }

    public func run() async throws {
        guard notifier.isEnabled else { return await idleUntilShutdown() }
        let interval = notifier.watchdogInterval ?? .seconds(10)
        // The checks read the engine and the store from the writer's thread, and sleep on its
        // alarm: a `Task.sleep` would wake two dispatch threads per check and hop back.
        let writer = store.writerExecutor
        do {
            try await withTaskExecutorPreference(writer) {
                try await cancelWhenGracefulShutdown { try await checkEvery(interval, sleepingOn: writer) }
            }
        } catch is CancellationError {}
        notifier.send("STOPPING=1")
    }

    private func checkEvery(_ interval: Duration, sleepingOn writer: ThreadExecutor) async throws {
        var previous: CaptureCounters?
        var stalled = false
        while !Task.isCancelled {
            let check = await check(previous: previous)
            previous = check.counters
            if check.healthy {
                if notifier.watchdogInterval != nil { notifier.send("WATCHDOG=1") }
                if stalled { logger.notice("pipeline progressing again", metadata: ["subsystem": "watchdog"]) }
                stalled = false
            } else if !stalled {
                stalled = true
                logger.error("pipeline stalled; withholding watchdog keep-alives", metadata: ["subsystem": "watchdog", "reason": "\(check.status)"])
            }
            notifier.send("STATUS=\(check.status)")
            try await writer.sleep(for: interval)
        }
    }

    struct Check {
        var healthy: Bool
        var counters: CaptureCounters
        var status: String
    }

    func check(previous: CaptureCounters?) async -> Check {
        let counters = await engine.counters
        let open = await engine.openSessions().count
        if let stallFile, FileManager.default.fileExists(atPath: stallFile) {
            return Check(healthy: false, counters: counters, status: "stalled (test hook)")
        }
        let used: Int
        do { used = try await store.usedBytes() } catch {
            return Check(healthy: false, counters: counters, status: "store unreachable: \(error)")
        }
        let pendingAge = await engine.uncommittedAge()
        let summary = "\(open) open sessions, \(counters.committedSamples) samples committed, \(counters.commits) commits, store \(used / 1_048_576) MiB"
        // The gateway stops for this by itself (the next start moves the file aside); until it
        // has, no keep-alive.
        if case .damaged(_, let reason) = store.integrity {
            return Check(healthy: false, counters: counters, status: "store: damaged (\(reason)); the gateway stops, and its next start moves the file aside")
        }
        // A full disk is reported, not restarted: a restart cannot make space, and the engine
        // frees what it can and keeps the sessions honest meanwhile.
        switch await engine.storeCondition {
        case .full:
            let free = store.space().map { "\($0.freeBytes / 1024) KiB free" } ?? "free space unknown"
            return Check(healthy: true, counters: counters,
                         status: "store: full (\(free), \(counters.storeFullSamples) samples not kept); \(summary)")
        case .atLimit(_, let limitBytes):
            // Not a fault of the gateway's: the broker is away longer than the limit holds.
            return Check(healthy: true, counters: counters,
                         status: "store: at limit (retention.maxStoreBytes \(limitBytes / 1_048_576) MiB reached, unpublished chunks evicted); \(summary)")
        case .writable:
            break
        }
        if let problem = Self.stall(previous: previous, current: counters, openSessions: open, uncommittedAge: pendingAge, stallAfter: stallAfter) {
            return Check(healthy: false, counters: counters, status: problem)
        }
        return Check(healthy: true, counters: counters, status: summary)
    }

    /// The progress rule, without I/O: why the pipeline is stalled, or `nil` when it progresses.
    ///
    /// - Commits failed since the last check and none succeeded: stalled (the store refuses writes).
    /// - Otherwise a commit since the last check is progress.
    /// - Without open sessions, capture is idle by design.
    /// - With open sessions, nothing waiting to be committed (or waiting less than
    ///   `stallAfter`) is idle too: a sensor may simply be quiet.
    static func stall(previous: CaptureCounters?, current: CaptureCounters, openSessions: Int, uncommittedAge: Duration?,
                      stallAfter: Duration) -> String? {
        let committed = previous.map { current.commits > $0.commits } ?? false
        let failed = previous.map { current.failedCommits > $0.failedCommits } ?? false
        if failed && !committed { return "capture stalled: store commits are failing (\(current.failedCommits) failed so far)" }
        if committed || openSessions == 0 { return nil }
        guard let uncommittedAge, uncommittedAge >= stallAfter else { return nil }
        return "capture stalled: samples waiting \(uncommittedAge) without a commit"
    }

    private func idleUntilShutdown() async {
        try? await gracefulShutdown()
    }
}
