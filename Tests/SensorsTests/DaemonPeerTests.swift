import Foundation
import GyroStore
import PeerSupport
import TestSupport
import XCTest

/// The daemon (`gyrogate run`) against the bumble peer: it opens the transport from the
/// configuration, streams into its store, and on SIGTERM stops the board and closes the session.
final class DaemonPeerTests: XCTestCase {
    func testDaemonStreamsAndStopsCleanlyOnSigterm() async throws {
        let peer = try MetaWearPeer(sensors: 1, extraArguments: ["--model", "MMS"])
        defer { peer.stop() }
        let directory = try TemporaryDirectory()
        let config = """
        {
          "gatewayId": "daemon-test", "dataDirectory": "\(directory.path)",
          "bluetooth": { "transport": "\(peer.transportSpec)", "maxSensors": 2 },
          "sensors": [ { "address": "C4:BE:84:00:00:01", "userId": "daemon-user" } ],
          "gyro": { "odrHz": 200, "rangeDps": 500 },
          "capture": { "chunkSize": 300, "commitIntervalMs": 200 },
          "mqtt": { "host": "127.0.0.1" },
          "admin": { "socketPath": "\(directory.file("admin.sock"))" },
          "boards": { "ledOnStreaming": true }
        }
        """
        try config.write(toFile: directory.file("config.json"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = builtProductsDirectory().appendingPathComponent("gyrogate")
        process.arguments = ["run", "--config", directory.file("config.json")]
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let exited = process.exitLatch()
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        // Streaming, with more than the 400 samples checked below sent.
        try await waitFor("the daemon streaming", timeout: 60) {
            let runs = try peer.status().sensors[0]["gyro_runs"] as? [[String: Any]] ?? []
            return runs.last?["sent"] as? Int ?? 0 >= 500
        }
        let running = try peer.status().sensors[0]
        XCTAssertEqual((running["gyro"] as? [String: Any])?["streaming"] as? Bool, true)
        XCTAssertEqual((running["gyro"] as? [String: Any])?["odr_hz"] as? Double, 200)
        XCTAssertGreaterThan(running["led_commands"] as? Int ?? 0, 0)
        kill(process.processIdentifier, SIGTERM)
        let stopped = await exited.wait(timeout: 10)
        XCTAssertTrue(stopped)
        XCTAssertFalse(process.isRunning)
        XCTAssertEqual(process.terminationStatus, 0)
        let board = try peer.status().sensors[0]
        XCTAssertEqual((board["gyro"] as? [String: Any])?["streaming"] as? Bool, false, "stopped on shutdown")

        let store = try GyroStore.open(directory: directory.path, logger: testLogger())
        let sessions = try await store.sessions()
        XCTAssertEqual(sessions.count, 1)
        XCTAssertEqual(sessions.first?.isOpen, false)
        let (samples, gaps, _) = try await readBack(store, device: "C4:BE:84:00:00:01")
        XCTAssertEqual(checkWaveform(samples, odr: 200, lsbPerDps: 65.6).problems, [])
        XCTAssertGreaterThan(samples.count, 400)
        XCTAssertEqual(gaps.count, 0)
    }

    /// A controller that is not there when the gateway starts (emulator not started yet, dongle
    /// not plugged in) is retried: the daemon keeps running and streams once it appears.
    func testDaemonWaitsForAControllerThatAppearsLater() async throws {
        _ = try MetaWearPeer.python()
        let port = try freeTCPPort()
        let directory = try TemporaryDirectory()
        let config = """
        {
          "gatewayId": "late-controller", "dataDirectory": "\(directory.path)",
          "bluetooth": { "transport": "tcp:127.0.0.1:\(port)" },
          "sensors": [ { "address": "C4:BE:84:00:00:01", "userId": "late-user" } ],
          "gyro": { "odrHz": 50, "rangeDps": 2000 },
          "capture": { "chunkSize": 100, "commitIntervalMs": 200 },
          "mqtt": { "host": "127.0.0.1" },
          "admin": { "socketPath": "\(directory.file("admin.sock"))" }
        }
        """
        try config.write(toFile: directory.file("config.json"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = builtProductsDirectory().appendingPathComponent("gyrogate")
        process.arguments = ["run", "--config", directory.file("config.json")]
        // Its log is read as it comes: the retry on the missing controller is the event waited for.
        let (log, writer) = try OutputLines.pipe()
        let logHandle = FileHandle(fileDescriptor: writer, closeOnDealloc: true)
        process.standardError = logHandle
        process.standardOutput = FileHandle.nullDevice
        let exited = process.exitLatch()
        try process.run()
        try? logHandle.close()
        defer { if process.isRunning { process.terminate() } }
        let retrying = await log.wait(timeout: 30) { $0.contains("bluetooth controller unavailable; retrying") }
        XCTAssertNotNil(retrying, "the gateway retries a missing controller: \(log.text)")
        XCTAssertTrue(process.isRunning, "a missing controller must not stop the gateway")

        let peer = try MetaWearPeer(sensors: 1, hciPort: port)
        defer { peer.stop() }
        try await waitFor("the gateway connected once the controller appeared") {
            ((try? peer.status().sensors[0])?["gyro"] as? [String: Any])?["streaming"] as? Bool ?? false
        }
        try await waitFor("samples sent") {
            let runs = try peer.status().sensors[0]["gyro_runs"] as? [[String: Any]] ?? []
            return runs.last?["sent"] as? Int ?? 0 >= 50
        }
        kill(process.processIdentifier, SIGTERM)
        let stopped = await exited.wait(timeout: 10)
        XCTAssertTrue(stopped)
        XCTAssertEqual(process.terminationStatus, 0)
        let store = try GyroStore.open(directory: directory.path, logger: testLogger())
        let sessions = try await store.sessions()
        XCTAssertEqual(sessions.count, 1)
        XCTAssertGreaterThan(sessions.first?.samples ?? 0, 20)
    }

    private func freeTCPPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw XCTSkip("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
