import Capture
import Foundation
import GyroStore
import Logging
import ServiceLifecycle

/// Sends `WATCHDOG=1` at half of `$WATCHDOG_USEC`, but only while the pipeline makes progress,
/// and a `STATUS=` line at each check.
///
/// Progress, checked each interval: the store answers a read, and capture is either idle by
/// design (no open session, or nothing waiting to be committed) or its commit counter
/// advanced since the last check. An open session whose uncommitted samples are older than
/// `stallAfter` while no commit happened is a stall: keep-alives stop and systemd restarts the
/// gateway after `WatchdogSec`.
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
        do {
            try await cancelWhenGracefulShutdown {
                var lastCommits: Int64 = -1
                var stalled = false
                while !Task.isCancelled {
                    let check = await self.check(lastCommits: lastCommits)
                    lastCommits = check.commits
                    if check.healthy {
                        if self.notifier.watchdogInterval != nil { self.notifier.send("WATCHDOG=1") }
                        if stalled { self.logger.notice("pipeline progressing again", metadata: ["subsystem": "watchdog"]) }
                        stalled = false
                    } else if !stalled {
                        stalled = true
                        self.logger.error("pipeline stalled; withholding watchdog keep-alives", metadata: ["subsystem": "watchdog", "reason": "\(check.status)"])
                    }
                    self.notifier.send("STATUS=\(check.status)")
                    try await Task.sleep(for: interval)
                }
            }
        } catch is CancellationError {}
        notifier.send("STOPPING=1")
    }

    struct Check {
        var healthy: Bool
        var commits: Int64
        var status: String
    }

    func check(lastCommits: Int64) async -> Check {
        let counters = await engine.counters
        let open = await engine.openSessions().count
        if let stallFile, FileManager.default.fileExists(atPath: stallFile) {
            return Check(healthy: false, commits: counters.commits, status: "stalled (test hook)")
        }
        let used: Int
        do { used = try await store.usedBytes() } catch {
            return Check(healthy: false, commits: counters.commits, status: "store unreachable: \(error)")
        }
        let pendingAge = await engine.uncommittedAge()
        let advanced = counters.commits != lastCommits
        let idle = open == 0 || pendingAge.map { $0 < stallAfter } ?? true
        let status = "\(open) open sessions, \(counters.committedSamples) samples committed, \(counters.commits) commits, store \(used / 1_048_576) MiB"
        if advanced || idle { return Check(healthy: true, commits: counters.commits, status: status) }
        return Check(healthy: false, commits: counters.commits, status: "capture stalled: uncommitted samples for \(pendingAge.map { "\($0)" } ?? "?")")
    }

    private func idleUntilShutdown() async {
        try? await gracefulShutdown()
    }
}
