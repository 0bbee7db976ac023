import Admin
import Foundation
import TestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// `gyrogate run --config <temp config>` as a child process, its socket and store in a temp dir.
/// It is started as systemd would: `NOTIFY_SOCKET` points at ``notify``, so that its `READY=1`
/// (sent once the admin socket accepts) is the event a test waits for, and its exit another.
final class DaemonProcess: @unchecked Sendable {
    let directory: TemporaryDirectory
    let process = Process()
    /// The daemon's sd_notify messages (READY=1, STATUS=…, WATCHDOG=1, STOPPING=1).
    let notify: NotifySocket
    /// Opens when the daemon exits.
    let exited = Latch()
    var socketPath: String { directory.file("admin.sock") }
    var configPath: String { directory.file("config.json") }
    var client: AdminClient { AdminClient(socketPath: socketPath, timeoutSeconds: 15) }

    static var binary: URL { builtProductsDirectory().appendingPathComponent("gyrogate") }

    /// Writes the configuration (`admin` and extra top-level keys merged in) and starts the daemon.
    init(admin: [String: Any] = [:], environment: [String: String] = [:], directory: TemporaryDirectory? = nil, waitUntilReady: Bool = true) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary.path) else {
            throw XCTSkip("gyrogate not built at \(Self.binary.path); run `swift build` first")
        }
        self.directory = try directory ?? TemporaryDirectory("gyrogate-admin")
        notify = try NotifySocket(path: self.directory.file("notify.sock"))
        var adminSection: [String: Any] = ["socketPath": socketPath, "mode": "0660"]
        adminSection.merge(admin) { $1 }
        let config: [String: Any] = [
            "gatewayId": "admin-test", "dataDirectory": self.directory.file("data"), "timeZone": "UTC",
            "bluetooth": ["transport": "tcp:127.0.0.1:7001"],
            "sensors": [["address": "C4:BE:84:00:00:01", "userId": "alice", "name": "left wrist"]],
            "capture": ["chunkSize": 100, "commitIntervalMs": 200],
            "mqtt": ["host": "127.0.0.1"],
            "admin": adminSection,
        ]
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: configPath))
        process.executableURL = Self.binary
        process.arguments = ["run", "--config", configPath]
        var env = ProcessInfo.processInfo.environment
        env["LOG_LEVEL"] = env["GYROGATE_TEST_LOG"] ?? "warning"
        env.removeValue(forKey: "WATCHDOG_USEC")
        env.merge(environment) { $1 }
        env["NOTIFY_SOCKET"] = notify.path
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: self.directory.file("daemon.log"), contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: self.directory.file("daemon.log")))
        let exited = self.exited, notify = self.notify
        process.terminationHandler = { _ in
            exited.open()
            notify.poke()  // a waiter for READY=1 looks again: none will come
        }
        try process.run()
        if waitUntilReady { try waitForSocket() }
    }

    /// Waits for the daemon's READY=1 (its admin socket accepts), or its exit.
    func waitForSocket(timeout: TimeInterval = 30) throws {
        let ready = notify.waitBlocking(timeout: timeout, for: "READY=1") { [exited] in exited.isOpen }
        if ready { return }
        if exited.isOpen { throw DaemonError.exited(process.terminationStatus, log()) }
        throw DaemonError.notReady(log())
    }

    /// Everything the daemon wrote to standard error (call after it stopped).
    func log() -> String {
        (try? String(contentsOfFile: directory.file("daemon.log"), encoding: .utf8)) ?? ""
    }

    func stop() {
        guard !exited.isOpen else { return }
        kill(process.processIdentifier, SIGTERM)
        _ = exited.waitBlocking(timeout: 120)
    }

    func waitForExit(timeout: TimeInterval = 20) -> Int32? {
        exited.waitBlocking(timeout: timeout) ? process.terminationStatus : nil
    }

    deinit {
        if !exited.isOpen {
            kill(process.processIdentifier, SIGKILL)
            _ = exited.waitBlocking(timeout: 30)
        }
    }
}

enum DaemonError: Error, CustomStringConvertible {
    case exited(Int32, String)
    case notReady(String)

    var description: String {
        switch self {
        case .exited(let status, let log): "the daemon exited with \(status):\n\(log)"
        case .notReady(let log): "the daemon did not answer on its socket:\n\(log)"
        }
    }
}

/// Runs the built `gyrogate` CLI and returns its exit status and output.
func runCLI(_ arguments: [String], prefix: [String] = []) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    let out = Pipe(), err = Pipe()
    if prefix.isEmpty {
        process.executableURL = DaemonProcess.binary
        process.arguments = arguments
    } else {
        process.executableURL = URL(fileURLWithPath: prefix[0])
        process.arguments = Array(prefix.dropFirst()) + [DaemonProcess.binary.path] + arguments
    }
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
}

/// A listening or bound-then-closed unix socket at `path`, made with plain POSIX calls.
func makeSocketFile(at path: String, listen shouldListen: Bool) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
    if shouldListen {
        listen(fd, 8)
        return fd
    }
    close(fd)
    return -1
}
