import Doctor
import Foundation
import TestSupport
import XCTest

/// A configuration in a temporary folder where every check passes unless a test breaks one
/// thing: an H4/TCP "controller" (a listening socket), a data directory and an admin socket in
/// the folder, and (when given) a real mosquitto broker.
final class DoctorFixture: @unchecked Sendable {
    let directory: TemporaryDirectory
    /// A listening TCP socket standing in for the controller (the kernel completes connects).
    private let listener: Int32
    let controllerPort: Int
    var config: [String: Any]

    init(brokerPort: Int) throws {
        directory = try TemporaryDirectory("doctor")
        (listener, controllerPort) = try Self.listen()
        config = [
            "gatewayId": "doctor-test",
            "dataDirectory": directory.file("data"),
            "bluetooth": ["transport": "tcp:127.0.0.1:\(controllerPort)"],
            "mqtt": ["host": "127.0.0.1", "port": brokerPort, "topicPrefix": "site1/", "keepaliveSeconds": 5],
            "admin": ["socketPath": directory.file("run/admin.sock")],
            "retention": ["maxStoreBytes": 1 << 20],
        ]
    }

    deinit { close(listener) }

    /// Sets `value` at `section.key` (or a top-level `key` when `section` is nil).
    func set(_ section: String?, _ key: String, _ value: Any) {
        guard let section else { config[key] = value; return }
        var object = config[section] as? [String: Any] ?? [:]
        object[key] = value
        config[section] = object
    }

    /// Writes the configuration and runs the doctor on it.
    /// `synchronised`: what the clock check hears from the kernel (this machine's may not be).
    func run(now: @escaping @Sendable () -> Date = { Date() }, processStatusPath: String = "/proc/self/status",
             synchronised: Bool? = true) async throws -> DoctorReport {
        let path = directory.file("config.json")
        try JSONSerialization.data(withJSONObject: config, options: [.sortedKeys]).write(to: URL(fileURLWithPath: path))
        return await run(path: path, now: now, processStatusPath: processStatusPath, synchronised: synchronised)
    }

    func run(path: String, now: @escaping @Sendable () -> Date = { Date() }, processStatusPath: String = "/proc/self/status",
             synchronised: Bool? = true) async -> DoctorReport {
        let options = GatewayDoctor.Options(environment: [:], brokerTimeout: .seconds(5), now: now, processStatusPath: processStatusPath,
                                            clockSynchronised: { synchronised })
        let report = await GatewayDoctor(options: options, logger: testLogger()).run(configPath: path)
        if ProcessInfo.processInfo.environment["GYROGATE_TEST_LOG"] != nil { print(report.lines.joined(separator: "\n")) }
        return report
    }

    private static func listen() throws -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        guard fd >= 0, bound == 0, Glibc.listen(fd, 16) == 0 else { throw XCTSkip("cannot listen on loopback (errno \(errno))") }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}

func requireBroker() throws {
    if MosquittoBroker.executable == nil {
        if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail("mosquitto is not installed") }
        throw XCTSkip("mosquitto is not installed (bash Tests/run-tests.sh installs it)")
    }
}

/// Asserts that every check but `except` came out ok, and that the report's lines and exit
/// status agree with the statuses.
func assertOthersPass(_ report: DoctorReport, except failing: Set<String>, file: StaticString = #filePath, line: UInt = #line) {
    for result in report.results where !failing.contains(result.check) {
        XCTAssertEqual(result.status, .ok, result.line, file: file, line: line)
    }
    for result in report.results {
        let prefix = switch result.status { case .ok: "ok   "; case .warn: "warn "; case .fail: "FAIL " }
        XCTAssertTrue(result.line.hasPrefix(prefix + result.check + ": "), result.line, file: file, line: line)
        if result.status != .ok { XCTAssertTrue(result.line.contains(" — fix: "), result.line, file: file, line: line) }
    }
    XCTAssertEqual(report.exitCode, report.results.contains { $0.status == .fail } ? 1 : 0, file: file, line: line)
}
