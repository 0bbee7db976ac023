import Foundation
@_exported import SupportCore

/// A child process started with `posix_spawn` and reaped by a thread of its own blocked in
/// `waitpid`, so that its exit is an event to wait on. (Foundation's `Process.waitUntilExit`
/// spins a run loop that does not finish on a cooperative thread.)
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    /// The wait status once the child exited.
    public let exit = Watched<Int32?>(nil)
    /// What the child writes to stdout and stderr, when started with `watchOutput`.
    public let output: OutputLines?

    /// Starts `path` with `arguments`; stdout and stderr go to `outputFile` (or /dev/null). With
    /// `watchOutput` they go through a pipe to ``output`` (and still to `outputFile` when given).
    public init(_ path: String, _ arguments: [String], outputFile: String? = nil, environment: [String: String] = [:],
                watchOutput: Bool = false) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var writer: Int32 = -1
        if watchOutput {
            let pipe = try OutputLines.pipe(copyTo: outputFile)
            output = pipe.lines
            writer = pipe.writer
            posix_spawn_file_actions_adddup2(&actions, writer, 1)
        } else {
            output = nil
            posix_spawn_file_actions_addopen(&actions, 1, outputFile ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o644)
        }
        defer { if writer >= 0 { close(writer) } }
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw ChildProcessError.spawnFailed(path: path, errno: rc) }
        self.pid = pid
        let exit = self.exit, child = pid
        let reaper = Thread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
            exit.set(status)
        }
        reaper.name = "test-reaper"
        reaper.start()
    }

    public var isRunning: Bool { exit.value == nil }

    /// Sends `signal` and waits for the exit (SIGKILL after `timeout` seconds).
    public func stop(signal: Int32 = SIGTERM, timeout: Double = 10) {
        guard isRunning else { return }
        kill(pid, signal)
        if wait(timeout: timeout) == nil {
            kill(pid, SIGKILL)
            _ = wait(timeout: 60)
        }
    }

    /// Waits for the process to exit by itself; returns its wait status, or nil on timeout.
    public func wait(timeout: Double) -> Int32? {
        _ = exit.waitBlocking(timeout: timeout) { $0 != nil }
        return exit.value
    }

    /// ``wait(timeout:)`` without blocking a thread of the cooperative pool.
    public func exited(timeout: Double) async -> Int32? {
        _ = await exit.wait(timeout: timeout) { $0 != nil }
        return exit.value
    }

    deinit { stop(signal: SIGKILL) }

    public enum ChildProcessError: Error { case spawnFailed(path: String, errno: Int32) }
}

extension Process {
    /// A latch opened when this process exits: set it before `run()`. (Foundation's
    /// `waitUntilExit` polls a run loop; the termination handler is the event.)
    public func exitLatch() -> Latch {
        let latch = Latch()
        terminationHandler = { _ in latch.open() }
        return latch
    }
}
