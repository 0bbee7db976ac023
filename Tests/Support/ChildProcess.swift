import Foundation

/// A child process started with `posix_spawn` and reaped with `waitpid`. (Foundation's
/// `Process.waitUntilExit` spins a run loop that does not finish on a cooperative thread.)
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    private var exitStatus: Int32?

    /// Starts `path` with `arguments`; stdout and stderr go to `outputFile` (or /dev/null).
    public init(_ path: String, _ arguments: [String], outputFile: String? = nil, environment: [String: String] = [:]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let output = outputFile ?? "/dev/null"
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
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
    }

    public var isRunning: Bool {
        if exitStatus != nil { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            exitStatus = status
            return false
        }
        return true
    }

    /// Sends `signal` and waits for the exit (SIGKILL after `timeout` seconds).
    public func stop(signal: Int32 = SIGTERM, timeout: Double = 10) {
        guard isRunning else { return }
        kill(pid, signal)
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning {
            if Date() > deadline { kill(pid, SIGKILL) }
            usleep(5_000)
        }
    }

    /// Waits for the process to exit by itself; returns its wait status, or nil on timeout.
    public func wait(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while isRunning {
            if Date() > deadline { return nil }
            usleep(10_000)
        }
        return exitStatus
    }

    deinit { stop(signal: SIGKILL) }

    public enum ChildProcessError: Error { case spawnFailed(path: String, errno: Int32) }
}
