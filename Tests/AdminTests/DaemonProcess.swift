import Admin
import Foundation
import TestSupport
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// `gyrogate run --config <temp config>` as a child process, its socket and store in a temp dir.
final class DaemonProcess: @unchecked Sendable {
    let directory: TemporaryDirectory
    let process = Process()
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
        env.removeValue(forKey: "NOTIFY_SOCKET")
        env.removeValue(forKey: "WATCHDOG_USEC")
        env.merge(environment) { $1 }
        process.environment = env
        process.standardOutput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: self.directory.file("daemon.log"), contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: self.directory.file("daemon.log")))
        try process.run()
        if waitUntilReady { try waitForSocket() }
    }

    func waitForSocket(timeout: TimeInterval = 30) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if !process.isRunning { throw DaemonError.exited(process.terminationStatus, log()) }
            if let response = try? client.request("GET", "/v1/status"), response.status == 200 { return }
            usleep(50_000)
        }
        throw DaemonError.notReady(log())
    }

    /// Everything the daemon wrote to standard error (call after it stopped).
    func log() -> String {
        (try? String(contentsOfFile: directory.file("daemon.log"), encoding: .utf8)) ?? ""
    }

    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    func waitForExit(timeout: TimeInterval = 20) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        return process.isRunning ? nil : process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
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
