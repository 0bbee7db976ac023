import Foundation
import SupportCore
import XCTest

/// The emulated MetaWear peer (Tests/Peers/metawear_peer.py) as a child process, one per test
/// class: started on free ports with --exit-with-parent, addressed by its READY line.
///
/// The python comes from GYROGATE_PEER_PYTHON (set by Tests/run-tests.sh), else the package's
/// .venv. Without it the tests skip on a developer's machine and fail under CI=true: CI must
/// prove the real path.
public final class MetaWearPeer: @unchecked Sendable {
    let process: Process
    /// Opens when the peer exits (the process's termination handler).
    let exited = Latch()
    public let hciPort: Int
    public let controlPort: Int

    public static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    public static func python() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["GYROGATE_PEER_PYTHON"], FileManager.default.isExecutableFile(atPath: path) {
            return path
        }
        let venv = packageRoot.appendingPathComponent(".venv/bin/python").path
        if FileManager.default.isExecutableFile(atPath: venv) { return venv }
        let message = "bumble peer unavailable: set GYROGATE_PEER_PYTHON or create .venv (bash Tests/run-tests.sh does)"
        if environment["CI"] == "true" {
            XCTFail(message)
            throw XCTSkip("failed: " + message)
        }
        throw XCTSkip(message)
    }

    public init(sensors: Int, hciPort requestedPort: Int = 0, extraArguments: [String] = []) throws {
        let python = try Self.python()
        process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.currentDirectoryURL = Self.packageRoot.appendingPathComponent("Tests/Peers")
        process.arguments = ["metawear_peer.py", "--hci-port", "\(requestedPort)", "--control-port", "0", "--sensors", "\(sensors)",
                             "--exit-with-parent"] + extraArguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let exited = self.exited
        process.terminationHandler = { _ in exited.open() }
        try process.run()
        // Read the READY line (the peer prints nothing else on stdout).
        var line = Data()
        let handle = output.fileHandleForReading
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let byte = handle.readData(ofLength: 1)
            if byte.isEmpty { break }
            if byte.first == UInt8(ascii: "\n") { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self)
        var ports: [String: Int] = [:]
        for part in text.split(separator: " ") {
            let pair = part.split(separator: "=")
            if pair.count == 2, let value = Int(pair[1]) { ports[String(pair[0])] = value }
        }
        guard text.hasPrefix("READY"), let hci = ports["hci"], let control = ports["control"] else {
            process.terminate()
            throw NSError(domain: "MetaWearPeer", code: 1, userInfo: [NSLocalizedDescriptionKey: "peer did not start: \(text)"])
        }
        hciPort = hci
        controlPort = control
    }

    public var transportSpec: String { "tcp:127.0.0.1:\(hciPort)" }

    /// Sends one control command and returns the reply object; throws when `ok` is false.
    @discardableResult
    public func control(_ request: [String: Any]) throws -> [String: Any] {
        let socket = try ControlSocket(port: controlPort)
        defer { socket.close() }
        var data = try JSONSerialization.data(withJSONObject: request)
        data.append(UInt8(ascii: "\n"))
        try socket.send(data)
        let reply = try socket.readLine()
        guard let object = try JSONSerialization.jsonObject(with: reply) as? [String: Any] else {
            throw NSError(domain: "MetaWearPeer", code: 2, userInfo: [NSLocalizedDescriptionKey: "bad reply"])
        }
        guard object["ok"] as? Bool == true else {
            throw NSError(domain: "MetaWearPeer", code: 3,
                          userInfo: [NSLocalizedDescriptionKey: "peer: \(object["error"] ?? "error")"])
        }
        return object
    }

    public func status() throws -> (controller: [String: Any], sensors: [[String: Any]]) {
        let reply = try control(["cmd": "status"])
        return (reply["controller"] as? [String: Any] ?? [:], reply["sensors"] as? [[String: Any]] ?? [])
    }

    /// Kills the peer with SIGKILL: a controller that vanishes without a word on the H4 link, as
    /// when a dongle is pulled or an emulator crashes. A new peer may then listen on ``hciPort``.
    public func kill() {
        Glibc.kill(process.processIdentifier, SIGKILL)
        _ = exited.waitBlocking(timeout: 30)
    }

    public func stop() {
        _ = try? control(["cmd": "stop"])
        if !exited.waitBlocking(timeout: 2) { process.terminate() }
        _ = exited.waitBlocking(timeout: 30)
    }
}

/// A blocking TCP client for the control channel (loopback only).
private final class ControlSocket {
    private let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            Glibc.close(fd)
            throw NSError(domain: "ControlSocket", code: Int(errno))
        }
    }

    func send(_ data: Data) throws {
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                guard written > 0 else { throw NSError(domain: "ControlSocket", code: Int(errno)) }
                offset += written
            }
        }
    }

    func readLine() throws -> Data {
        var line = Data()
        var byte: UInt8 = 0
        while true {
            let count = Glibc.read(fd, &byte, 1)
            guard count == 1 else { throw NSError(domain: "ControlSocket", code: Int(errno)) }
            if byte == UInt8(ascii: "\n") { return line }
            line.append(byte)
        }
    }

    func close() { Glibc.close(fd) }
}
