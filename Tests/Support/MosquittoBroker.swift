import Foundation

/// A real mosquitto broker on a free loopback port, with a generated config in a temp dir.
///
/// `max_queued_messages 0` (no limit): a no-loss test must not measure the broker's default
/// queue of 1,000 (`docs/stack-facts.md`). Persistence only when asked (then it survives `restart`).
public final class MosquittoBroker: @unchecked Sendable {
    public static let executable = ["/usr/sbin/mosquitto", "/usr/bin/mosquitto"].first { FileManager.default.isExecutableFile(atPath: $0) }

    public let port: Int
    public let directory: TemporaryDirectory
    let extraLines: [String]
    let persistence: Bool
    let environment: [String: String]
    let logEverything: Bool
    var process: ChildProcess?

    public init(persistence: Bool = false, extraLines: [String] = [], port: Int? = nil,
                environment: [String: String] = [:], logEverything: Bool = true) throws {
        self.logEverything = logEverything
        self.port = port ?? Self.freePort()
        self.environment = environment
        self.persistence = persistence
        self.extraLines = extraLines
        directory = try TemporaryDirectory("mosquitto")
    }

    public var logFile: String { directory.file("mosquitto.log") }

    /// The running broker's process id (for benchmarks that account its CPU time).
    public var pid: pid_t? { process?.pid }

    public func start() throws {
        guard let executable = Self.executable else { throw BrokerError.notInstalled }
        var lines = [
            "listener \(port) 127.0.0.1",
            "allow_anonymous true",
            "max_queued_messages 0",
            "user root",
            "log_dest file \(logFile)",
            // Also to the pipe the test reads (stderr is unbuffered): "running" says every listener is open.
            "log_dest stderr",
            // "running", "Reloading config." are information messages: the least a test waits on.
            logEverything ? "log_type all" : "log_type notice\nlog_type information",
        ]
        if persistence {
            lines += ["persistence true", "persistence_location \(directory.path)/", "autosave_interval 1"]
        }
        lines += extraLines
        let config = directory.file("mosquitto.conf")
        try (lines.joined(separator: "\n") + "\n").write(toFile: config, atomically: true, encoding: .utf8)
        let process = try ChildProcess(executable, ["-c", config], environment: environment, watchOutput: true)
        self.process = process
        let running = process.output?.waitBlocking(timeout: 10) { $0.hasSuffix(" running") }
        guard running == nil else { return }
        if !process.isRunning || process.output?.state.value.ended == true {
            throw BrokerError.exited(log: process.output?.text ?? "")
        }
        throw BrokerError.notListening(port)
    }

    /// The running broker's log lines so far (what it wrote since its last `start`).
    public var logLines: [String] { process?.output?.lines ?? [] }

    /// Waits until `condition` holds for the running broker's log lines (each new line wakes it).
    public func output(timeout: Double = 10, until condition: @escaping ([String]) -> Bool) async -> Bool {
        guard let output = process?.output else { return false }
        return await output.state.wait(timeout: timeout) { condition($0.lines) }
    }

    /// Waits until the running broker logs a line containing `text` (counting from line `after`).
    public func waitForLog(containing text: String, after: Int = 0, timeout: Double = 10) async -> Bool {
        guard let output = process?.output else { return false }
        return await output.wait(timeout: timeout, after: after) { $0.contains(text) } != nil
    }

    /// Sends a signal to the running broker (SIGHUP: mosquitto re-reads its ACL and password
    /// files); returns `kill`'s result, -1 when not running.
    public func signal(_ signal: Int32) -> Int32 {
        guard let pid = process?.pid else { return -1 }
        return kill(pid, signal)
    }

    /// SIGTERM (mosquitto saves its persistence file) and wait.
    public func stop() {
        process?.stop()
        process = nil
    }

    deinit { stop() }

    public static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    public static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    public enum BrokerError: Error {
        case notInstalled
        case exited(log: String)
        case notListening(Int)
    }
}
