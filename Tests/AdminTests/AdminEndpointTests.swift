import Admin
import Foundation
import JSON
import XCTest

/// Every endpoint of a real daemon (a child process) through a real unix-socket HTTP client.
final class AdminEndpointTests: XCTestCase {
    func testEveryEndpointAnswersWithTheExpectedJSON() throws {
        let daemon = try DaemonProcess()
        defer { daemon.stop() }
        let client = daemon.client

        // Status
        let status = try client.request("GET", "/v1/status")
        XCTAssertEqual(status.status, 200)
        XCTAssertEqual(status.headers["content-type"], "application/json")
        let body = status.object
        XCTAssertEqual(body["gatewayId"]?.string, "admin-test")
        XCTAssertEqual(body["version"]?.string, "0.1.0")
        XCTAssertNotNil(body["uptimeSeconds"]?.double)
        XCTAssertEqual(body["radio"]?["transport"]?.string, "tcp:127.0.0.1:7001")
        XCTAssertTrue((body["radio"]?["controller"]?.string ?? "").hasPrefix("tcp:127.0.0.1:7001: unavailable: "), "\(String(describing: body["radio"]))")
        // No broker listens for this daemon: the publisher says it is (re)connecting, with the reason.
        let brokerState = body["broker"]?["state"]?.string
        XCTAssertTrue(["connecting", "waitingToReconnect"].contains(brokerState ?? ""), "\(String(describing: brokerState))")
        XCTAssertEqual(body["outbox"]?["depth"], .integer(0))
        XCTAssertGreaterThan(body["store"]?["usedBytes"]?.int ?? 0, 0)
        XCTAssertEqual(body["store"]?["evictedUnpublishedChunks"], .integer(0))
        XCTAssertGreaterThanOrEqual(body["store"]?["writtenBytes"]?.int ?? -1, 0, "what the store wrote since it opened")
        XCTAssertEqual(body["store"]?["writtenBytesPerDay"], .null, "no daily rate in the first minute")
        XCTAssertNotNil(body["capture"]?["commitIntervalMs"]?.int)
        XCTAssertEqual(body["capture"]?["commitIntervalSetting"]?.string, "capture.commitIntervalMs")
        XCTAssertEqual(body["sensors"]?.array?.count, 1)
        // The clock as the kernel has it here: this machine's may or may not be synchronised.
        let clock = try XCTUnwrap(body["clock"])
        let kernelSynchronised = try XCTUnwrap(clock["kernelSynchronised"]?.bool)
        XCTAssertEqual(clock["state"]?.string, kernelSynchronised ? "synchronised" : "unsynchronised")
        XCTAssertEqual(clock["fix"] == nil, kernelSynchronised, "an unsynchronised clock comes with its fix")
        XCTAssertEqual(clock["stepDetection"]?.string, "timerfd", "the kernel says when the clock is set")
        XCTAssertEqual(clock["redatings"], .integer(0))

        // Sensors
        let sensors = try client.request("GET", "/v1/sensors")
        XCTAssertEqual(sensors.status, 200)
        XCTAssertEqual(sensors.object["sensors"]?[0]?["name"]?.string, "left wrist")
        XCTAssertEqual(try client.request("GET", "/v1/sensors/c4:be:84:00:00:01").object["userId"]?.string, "alice")
        XCTAssertEqual(try client.request("GET", "/v1/sensors/AA:BB:CC:DD:EE:FF").status, 404)

        // Start a session for the configured sensor (its user comes from the configuration).
        let started = try client.request("POST", "/v1/sessions", json: ["device": "C4:BE:84:00:00:01"])
        XCTAssertEqual(started.status, 201, started.text)
        let id = try XCTUnwrap(started.object["id"]?.string)
        XCTAssertTrue(id.hasPrefix("alice___"))
        XCTAssertEqual(started.object["open"]?.bool, true)
        XCTAssertEqual(try client.request("POST", "/v1/sessions", json: ["device": "C4:BE:84:00:00:01"]).status, 409)
        let sensor = try client.request("GET", "/v1/sensors/C4:BE:84:00:00:01").object
        XCTAssertEqual(sensor["session"]?["id"]?.string, id)
        // A sensor that is not configured needs a user.
        XCTAssertEqual(try client.request("POST", "/v1/sessions", json: ["device": "AA:00:00:00:00:02"]).status, 400)
        let other = try client.request("POST", "/v1/sessions", json: ["device": "AA:00:00:00:00:02", "userId": "bob"])
        XCTAssertEqual(other.status, 201)
        let otherId = try XCTUnwrap(other.object["id"]?.string)
        XCTAssertEqual(try client.request("GET", "/v1/sensors").object["sensors"]?.array?.count, 2)

        // Hazards, one session, stop.
        let hazards = try client.request("POST", "/v1/sessions/\(id)/hazards", json: ["fall": 3, "slip": 1])
        XCTAssertEqual(hazards.status, 200, hazards.text)
        XCTAssertEqual(hazards.object["hazards"], ["fall": 3, "slip": 1])
        XCTAssertEqual(try client.request("GET", "/v1/sessions/\(id)").object["open"]?.bool, true)
        let stopped = try client.request("POST", "/v1/sessions/\(id)/stop")
        XCTAssertEqual(stopped.status, 200)
        XCTAssertEqual(stopped.object["open"]?.bool, false)
        XCTAssertEqual(try client.request("POST", "/v1/sessions/nobody___1/stop").status, 404)
        XCTAssertEqual(try client.request("GET", "/v1/sessions/nobody___1").status, 404)

        // Sessions of a period, with totals.
        for range in ["today", "week", "month", "all"] {
            let list = try client.request("GET", "/v1/sessions?range=\(range)")
            XCTAssertEqual(list.status, 200)
            XCTAssertEqual(list.object["range"]?.string, range)
            XCTAssertEqual(list.object["count"], .integer(2))
            XCTAssertEqual(list.object["samples"], .integer(0))
            XCTAssertNotNil(list.object["durationSeconds"]?.double)
        }
        let alice = try client.request("GET", "/v1/sessions?range=all&user=alice").object
        XCTAssertEqual(alice["count"], .integer(1))
        XCTAssertEqual(alice["sessions"]?[0]?["id"]?.string, id)
        XCTAssertEqual(try client.request("GET", "/v1/sessions?range=year").status, 400)

        // Medals (a closed session earns firstSession).
        let medals = try client.request("GET", "/v1/medals?user=alice").object["medals"]
        XCTAssertEqual(medals?["firstSession"], .bool(true))
        XCTAssertEqual(medals?["tenSessions"], .bool(false))
        XCTAssertEqual(try client.request("GET", "/v1/medals").status, 400)

        // Documents: a collection's ids, one document, and a missing one.
        let records = try client.request("GET", "/v1/documents/records").object
        XCTAssertEqual(records["collection"]?.string, "records")
        XCTAssertEqual(Set(records["ids"]?.array ?? []), [.string(id), .string(otherId)])
        let record = try client.request("GET", "/v1/documents/records/\(id)")
        XCTAssertEqual(record.status, 200)
        XCTAssertEqual(record.object["user_id"]?.string, "alice")
        XCTAssertEqual(record.object["hazards"], ["fall": 3, "slip": 1])
        let daily = try client.request("GET", "/v1/documents/TitanUpUsers/alice/DailySessions/\(id)")
        XCTAssertEqual(daily.object["open"]?.bool, false)
        XCTAssertEqual(try client.request("GET", "/v1/documents/records/missing").status, 404)

        // Resync is handed to the publisher, which re-sends retained documents once connected.
        let resync = try client.request("POST", "/v1/resync")
        XCTAssertEqual(resync.status, 200)

        // Metrics.
        let metrics = try client.request("GET", "/metrics")
        XCTAssertEqual(metrics.status, 200)
        XCTAssertTrue(metrics.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
        for line in ["gyrogate_sessions_started_total 2", "gyrogate_sessions_closed_total 1", "gyrogate_sessions_open 1",
                     "# TYPE gyrogate_commits_total counter", "# TYPE gyrogate_outbox_depth gauge", "# TYPE gyrogate_store_bytes gauge",
                     "# TYPE gyrogate_store_written_bytes_total counter"] {
            XCTAssertTrue(metrics.text.contains(line + "\n"), "metrics lack \(line):\n\(metrics.text)")
        }
        XCTAssertTrue(metrics.text.contains("gyrogate_process_resident_memory_bytes "))
        XCTAssertTrue(metrics.text.contains("gyrogate_clock_kernel_synchronised \(kernelSynchronised ? 1 : 0)\n"), metrics.text)
        XCTAssertTrue(metrics.text.contains("gyrogate_clock_dating_\(kernelSynchronised ? "synchronised" : "unsynchronised") 1\n"), metrics.text)
        XCTAssertTrue(metrics.text.contains("gyrogate_clock_redatings_total 0\n"), metrics.text)
        for line in metrics.text.split(separator: "\n") where !line.hasPrefix("#") {
            XCTAssertTrue(line.hasPrefix("gyrogate_"), "\(line)")
            XCTAssertNotNil(Double(line.split(separator: " ").last.map(String.init) ?? ""), "\(line)")
        }

        // Delete: the session and its documents go.
        let deleted = try client.request("DELETE", "/v1/sessions/\(otherId)")
        XCTAssertEqual(deleted.status, 200)
        XCTAssertEqual(deleted.object["deleted"]?.string, otherId)
        XCTAssertEqual(try client.request("GET", "/v1/sessions/\(otherId)").status, 404)
        XCTAssertEqual(try client.request("GET", "/v1/documents/records").object["ids"], [.string(id)])
        XCTAssertEqual(try client.request("DELETE", "/v1/sessions/\(otherId)").status, 404)
    }

    func testEachRequestIsLoggedWithThePeerUid() throws {
        let daemon = try DaemonProcess(environment: ["LOG_LEVEL": "info"])
        XCTAssertEqual(try daemon.client.request("GET", "/v1/sensors").status, 200)
        daemon.stop()
        let line = daemon.log().split(separator: "\n").first { $0.contains("path=/v1/sensors") }
        XCTAssertNotNil(line, daemon.log())
        XCTAssertTrue(line?.contains("subsystem=admin") == true, "\(line ?? "")")
        XCTAssertTrue(line?.contains("uid=\(getuid())") == true, "\(line ?? "")")
        XCTAssertTrue(line?.contains("status=200") == true, "\(line ?? "")")
    }

    func testMutatingEndpointsCanBeRestrictedToSomeUids() throws {
        // The test runs as some uid; allow only another one.
        let other = getuid() == 4242 ? 4243 : 4242
        let daemon = try DaemonProcess(admin: ["allowedUids": [other]])
        defer { daemon.stop() }
        XCTAssertEqual(try daemon.client.request("GET", "/v1/status").status, 200)
        let denied = try daemon.client.request("POST", "/v1/sessions", json: ["device": "C4:BE:84:00:00:01"])
        XCTAssertEqual(denied.status, 403)
        XCTAssertEqual(denied.object["error"]?["code"]?.string, "forbidden")
        XCTAssertEqual(try daemon.client.request("GET", "/v1/sessions?range=all").object["count"], .integer(0))
    }
}
