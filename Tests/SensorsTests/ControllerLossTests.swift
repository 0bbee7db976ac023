import Foundation
import GyroStore
import PeerSupport
import TestSupport
import XCTest

/// The daemon (`gyrogate run`) whose controller goes away while it streams: the bumble peer is
/// killed (SIGKILL, as a pulled dongle or a crashed emulator) and started again on the same port.
/// The gateway reports the controller unavailable, opens it again by itself, and the sensor's
/// session goes on with the outage recorded as a disconnection gap.
final class ControllerLossTests: XCTestCase {
    static let address = "C4:BE:84:00:00:01"

    func testDaemonReopensAControllerThatWentAwayMidRun() async throws {
        var peer = try MetaWearPeer(sensors: 1)
        defer { peer.stop() }
        let port = peer.hciPort
        let directory = try TemporaryDirectory()
        let configPath = directory.file("config.json")
        let config = """
        {
          "gatewayId": "controller-loss", "dataDirectory": "\(directory.path)",
          "bluetooth": { "transport": "tcp:127.0.0.1:\(port)" },
          "sensors": [ { "address": "\(Self.address)", "userId": "loss-user" } ],
          "gyro": { "odrHz": 100, "rangeDps": 2000 },
          "capture": { "chunkSize": 200, "commitIntervalMs": 200 },
          "sessions": { "idleTimeoutSeconds": 300 },
          "mqtt": { "host": "127.0.0.1" },
          "admin": { "socketPath": "\(directory.file("admin.sock"))" }
        }
        """
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        let daemonLog = directory.file("daemon.log")
        _ = FileManager.default.createFile(atPath: daemonLog, contents: nil)
        let process = Process()
        process.executableURL = builtProductsDirectory().appendingPathComponent("gyrogate")
        process.arguments = ["run", "--config", configPath]
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: daemonLog))
        process.standardOutput = FileHandle.nullDevice
        let exited = process.exitLatch()
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        func logTail() -> String {
            let text = (try? String(contentsOfFile: daemonLog, encoding: .utf8)) ?? ""
            return "daemon log (tail):\n" + text.split(separator: "\n").suffix(40).joined(separator: "\n")
        }

        let streaming = try await waitForStatus(configPath, "samples committed before the loss") { status in
            committedSamples(status) > 200 && sensorField(status, "state") as? String == "streaming"
        }
        XCTAssertTrue(controllerState(streaming).contains(": running"), controllerState(streaming))
        // Unpacked 100 Hz goes through the board's time accounter, so the loop batches its reads.
        XCTAssertEqual(sensorField(streaming, "boardTime") as? Bool, true, sensorConnection(streaming))
        XCTAssertTrue(controllerState(streaming).hasSuffix("sensors streaming; reads batched every 500 ms"), controllerState(streaming))

        let killMs = Date().timeIntervalSince1970 * 1000
        peer.kill()
        let unavailable = try await waitForStatus(configPath, "the controller reported unavailable", logTail) { status in
            controllerState(status).contains(": unavailable: ")
        }
        XCTAssertTrue(process.isRunning, "a lost controller must not stop the gateway")
        let samplesAtLoss = committedSamples(unavailable)

        peer = try MetaWearPeer(sensors: 1, hciPort: port)
        let restartMs = Date().timeIntervalSince1970 * 1000
        let resumed = try await waitForStatus(configPath, "samples flowing from the re-opened controller", logTail) { status in
            committedSamples(status) > samplesAtLoss + 300 && sensorField(status, "state") as? String == "streaming"
        }
        let state = controllerState(resumed)
        XCTAssertTrue(state.contains(": running; re-opened after 1 loss"), state)
        XCTAssertGreaterThan((sensorField(resumed, "reconnects") as? NSNumber)?.intValue ?? 0, 0, sensorConnection(resumed))

        kill(process.processIdentifier, SIGTERM)
        let stopped = await exited.wait(timeout: 15)
        XCTAssertTrue(stopped, logTail())
        XCTAssertEqual(process.terminationStatus, 0, logTail())

        let store = try GyroStore.open(directory: directory.path, logger: testLogger())
        let (samples, gaps, sessions) = try await readBack(store, device: Self.address)
        // One session: the outage is far shorter than the idle timeout, so capture keeps it open.
        XCTAssertEqual(sessions.count, 1, "sessions \(sessions.map(\.id))")
        XCTAssertEqual(sessions.first?.isOpen, false)
        let outage = gaps.filter { $0.reason.isDisconnection && $0.fromMs < restartMs && $0.toMs > killMs }
        XCTAssertEqual(outage.count, 1, "gaps \(gaps.map { ($0.reason, $0.fromMs, $0.toMs, $0.missing) }), kill \(killMs), restart \(restartMs)")
        XCTAssertGreaterThan(outage.first?.missing ?? 0, 0)
        XCTAssertTrue(outage.first?.reason.rawValue.contains("controller lost") ?? false, "the gap says the controller went away: \(outage.first?.reason.rawValue ?? "")")
        XCTAssertEqual(sessions.first?.gaps.contains { $0.reason.isDisconnection }, true)
        XCTAssertTrue(samples.contains { $0.timestampMs < killMs }, "samples before the loss")
        XCTAssertTrue(samples.contains { $0.timestampMs > restartMs }, "samples after the controller came back")
        let check = checkWaveform(samples, odr: 100, lsbPerDps: 16.4)
        XCTAssertEqual(check.problems, [], "stream indices continue across the new controller, without duplicates")
        XCTAssertGreaterThanOrEqual(check.segments, 2, "the new peer's board counts from zero again")
    }

    // MARK: - The daemon's admin status, through `gyrogate status --json`

    private func waitForStatus(_ configPath: String, _ what: String, _ context: () -> String = { "" },
                               until condition: ([String: Any]) -> Bool) async throws -> [String: Any] {
        // The admin API has no long-poll: `gyrogate status` is asked again until the condition holds.
        var last: [String: Any] = [:]
        let met = try await poll(timeout: 60) { () -> [String: Any]? in
            guard let status = try? daemonStatus(configPath) else { return nil }
            last = status
            return condition(status) ? status : nil
        }
        if let met { return met }
        XCTFail("timed out waiting for \(what); last status: radio \(last["radio"] ?? "-"), capture \(last["capture"] ?? "-"), "
                + "sensors \(last["sensors"] ?? "-")\n\(context())")
        throw StatusTimeout(what: what)
    }

    private func daemonStatus(_ configPath: String) throws -> [String: Any] {
        let process = Process()
        process.executableURL = builtProductsDirectory().appendingPathComponent("gyrogate")
        process.arguments = ["status", "--config", configPath, "--json"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw NSError(domain: "ControllerLossTests", code: Int(process.terminationStatus))
        }
        return object
    }
}

private struct StatusTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// `TRANSPORT: STATE; N of M sensors streaming`, as the admin API shows the controller.
private func controllerState(_ status: [String: Any]) -> String {
    (status["radio"] as? [String: Any])?["controller"] as? String ?? ""
}

private func committedSamples(_ status: [String: Any]) -> Int {
    ((status["capture"] as? [String: Any])?["committedSamples"] as? NSNumber)?.intValue ?? 0
}

private func sensorConnection(_ status: [String: Any]) -> String {
    sensorField(status, "connection") as? String ?? ""
}

/// One of the sensor's fields in the admin API's status (docs/architecture.md, "Sensor fields of the admin API").
private func sensorField(_ status: [String: Any], _ name: String) -> Any? {
    let sensors = status["sensors"] as? [[String: Any]] ?? []
    return sensors.first { $0["address"] as? String == ControllerLossTests.address }?[name]
}
