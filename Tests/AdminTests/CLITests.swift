import Foundation
import XCTest

/// The operator commands against a running daemon, and offline with --data-dir.
final class CLITests: XCTestCase {
    func testCommandsTalkToTheDaemon() throws {
        let daemon = try DaemonProcess()
        defer { daemon.stop() }
        let socket = ["--socket", daemon.socketPath]

        let status = try runCLI(["status"] + socket)
        XCTAssertEqual(status.status, 0, status.stderr)
        XCTAssertTrue(status.stdout.contains("admin-test"), status.stdout)
        XCTAssertTrue(status.stdout.contains("C4:BE:84:00:00:01"), status.stdout)
        let statusJSON = try runCLI(["status", "--json"] + socket)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(statusJSON.stdout.utf8)) as? [String: Any])?["gatewayId"] as? String, "admin-test")

        let start = try runCLI(["session", "start", "--device", "C4:BE:84:00:00:01", "--user", "carol", "--json"] + socket)
        XCTAssertEqual(start.status, 0, start.stderr)
        let id = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(start.stdout.utf8)) as? [String: Any])?["id"] as? String)
        let again = try runCLI(["session", "start", "--device", "C4:BE:84:00:00:01"] + socket)
        XCTAssertEqual(again.status, 1)
        XCTAssertTrue(again.stderr.contains("409"), again.stderr)

        let hazard = try runCLI(["session", "hazard", id, "fall=2", "trip=5"] + socket)
        XCTAssertEqual(hazard.status, 0, hazard.stderr)
        XCTAssertTrue(hazard.stdout.contains("fall=2,trip=5"), hazard.stdout)
        XCTAssertEqual(try runCLI(["session", "hazard", id, "fall"] + socket).status, 64)

        let sensors = try runCLI(["sensors"] + socket)
        XCTAssertTrue(sensors.stdout.contains(id), sensors.stdout)
        let one = try runCLI(["sensors", "C4:BE:84:00:00:01", "--json"] + socket)
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(one.stdout.utf8)) as? [String: Any])?["name"] as? String, "left wrist")
        let unknown = try runCLI(["sensors", "AA:BB:CC:DD:EE:FF"] + socket)
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.stderr.contains("404"), unknown.stderr)

        let stop = try runCLI(["session", "stop", id] + socket)
        XCTAssertEqual(stop.status, 0, stop.stderr)
        XCTAssertTrue(stop.stdout.contains("closed"), stop.stdout)

        let sessions = try runCLI(["sessions", "--range", "today"] + socket)
        XCTAssertTrue(sessions.stdout.contains(id), sessions.stdout)
        XCTAssertTrue(sessions.stdout.contains("1 sessions"), sessions.stdout)
        let medals = try runCLI(["medals", "--user", "carol"] + socket)
        XCTAssertTrue(medals.stdout.contains("firstSession         yes"), medals.stdout)
        let documents = try runCLI(["documents", "get", "records"] + socket)
        XCTAssertEqual(documents.stdout, "\(id)\n")
        let document = try runCLI(["documents", "get", "records/\(id)"] + socket)
        XCTAssertTrue(document.stdout.contains("\"user_id\":\"carol\""), document.stdout)
        let traversal = try runCLI(["documents", "get", "records/../../etc/passwd"] + socket)
        XCTAssertEqual(traversal.status, 1)
        XCTAssertTrue(traversal.stderr.contains("400"), traversal.stderr)

        let resync = try runCLI(["resync"] + socket)
        XCTAssertEqual(resync.status, 0, resync.stderr)
        XCTAssertTrue(resync.stdout.contains("resync"), resync.stdout)

        // With --config, the socket comes from the configuration.
        let viaConfig = try runCLI(["status", "--config", daemon.configPath])
        XCTAssertEqual(viaConfig.status, 0, viaConfig.stderr)

        // Offline: --data-dir reads the store directly (SQLite WAL allows a second reader).
        let offline = try runCLI(["sessions", "--range", "all", "--data-dir", daemon.directory.file("data"), "--json"])
        XCTAssertEqual(offline.status, 0, offline.stderr)
        XCTAssertTrue(offline.stdout.contains(id), offline.stdout)
    }

    func testWithAConfigAndNoDaemonTheStoreIsReadOffline() throws {
        let daemon = try DaemonProcess()
        let started = try daemon.client.request("POST", "/v1/sessions", json: ["device": "C4:BE:84:00:00:01"])
        let id = try XCTUnwrap(started.object["id"]?.string)
        daemon.stop()
        let offline = try runCLI(["sessions", "--range", "all", "--config", daemon.configPath])
        XCTAssertEqual(offline.status, 0, offline.stderr)
        XCTAssertTrue(offline.stdout.contains(id), offline.stdout)
    }
}
