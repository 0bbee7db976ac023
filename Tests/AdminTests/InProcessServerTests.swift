@testable import Admin
import Capture
import Foundation
import GatewayConfig
import GyroStore
import JSON
import NIOCore
import NIOPosix
import TestSupport
import XCTest

/// The server and the API in process: injected providers, request timeouts, the watchdog's
/// progress rule, without a child process.
final class InProcessServerTests: XCTestCase {
    struct Fixture {
        let directory: TemporaryDirectory
        let store: GyroStore
        let engine: CaptureEngine
        let api: AdminAPI
        var socketPath: String { directory.file("admin.sock") }
    }

    func fixture(providers: AdminProviders = AdminProviders(), commitInterval: Duration = .milliseconds(200)) throws -> Fixture {
        let directory = try TemporaryDirectory("gyrogate-admin")
        let json = """
            {"gatewayId": "in-process", "timeZone": "UTC", "bluetooth": {"transport": "hci:0"}, "mqtt": {"host": "broker"},
             "admin": {"socketPath": "\(directory.file("admin.sock"))"}}
            """
        let configuration = try GatewayConfiguration.parse(Data(json.utf8), baseDirectory: directory.path)
        let store = try GyroStore.open(directory: directory.file("data"), logger: testLogger())
        let engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: 100, commitInterval: commitInterval),
                                   calendar: PeriodCalendar(timeZone: .utc), logger: testLogger())
        let api = AdminAPI(configuration: configuration, store: store, engine: engine, providers: providers, version: "test",
                           access: try AdminAccessPolicy())
        return Fixture(directory: directory, store: store, engine: engine, api: api)
    }

    func testInjectedProvidersShowInStatusAndResync() async throws {
        let providers = AdminProviders(
            publisherStatus: { PublisherStatus(state: "connected", detail: "broker:1883", publishedTotal: 7) },
            bluetoothStatus: { BluetoothStatus(controller: "powered on", sensors: [:]) },
            resync: { "re-published 3 retained documents" })
        let fixture = try fixture(providers: providers)
        let status = await fixture.api.respond(to: AdminRequest(method: "GET", target: "/v1/status"))
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(status.body)) as? [String: Any])
        XCTAssertEqual((object["broker"] as? [String: Any])?["state"] as? String, "connected")
        XCTAssertEqual((object["broker"] as? [String: Any])?["published"] as? Int, 7)
        XCTAssertEqual((object["radio"] as? [String: Any])?["controller"] as? String, "powered on")
        let resync = await fixture.api.respond(to: AdminRequest(method: "POST", target: "/v1/resync"))
        XCTAssertEqual(resync.status, 200)
        XCTAssertTrue(String(decoding: resync.body, as: UTF8.self).contains("re-published 3"))
    }

    /// A sensor's counters are fields of their own beside the `connection` text, so that no
    /// program parses that text (docs/architecture.md, "Sensor fields of the admin API").
    func testSensorCountersAreFieldsBesideTheConnectionText() async throws {
        let live = SensorLive(state: "streaming", samplesReceived: 998, samplesExpected: 1000, gaps: 1, missingSamples: 2,
                              reconnects: 3, boardTime: true, logEntries: 40, backfilledSamples: 12)
        let providers = AdminProviders(bluetoothStatus: {
            BluetoothStatus(controller: "powered on", sensors: ["AA:01": "streaming, 998/1000 samples"], live: ["AA:01": live])
        })
        let fixture = try fixture(providers: providers)
        let started = await fixture.api.respond(to: AdminRequest(method: "POST", target: "/v1/sessions",
                                                                 body: Array(#"{"device":"AA:01","userId":"u"}"#.utf8)))
        XCTAssertEqual(started.status, 201)
        for target in ["/v1/status", "/v1/sensors"] {
            let response = await fixture.api.respond(to: AdminRequest(method: "GET", target: target))
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
            let sensor = try XCTUnwrap((object["sensors"] as? [[String: Any]])?.first, target)
            XCTAssertEqual(sensor["connection"] as? String, "streaming, 998/1000 samples", target)
            XCTAssertEqual(sensor["state"] as? String, "streaming", target)
            XCTAssertEqual(sensor["samplesReceived"] as? Int, 998, target)
            XCTAssertEqual(sensor["samplesExpected"] as? Int, 1000, target)
            XCTAssertEqual(sensor["missingSamples"] as? Int, 2, target)
            XCTAssertEqual(sensor["reconnects"] as? Int, 3, target)
            XCTAssertEqual(sensor["boardTime"] as? Bool, true, target)
            XCTAssertEqual(sensor["backfilledSamples"] as? Int, 12, target)
            XCTAssertTrue(sensor["batteryPercent"] is NSNull, target)
            XCTAssertNotNil((sensor["session"] as? [String: Any])?["missingByReason"], target)
        }
    }

    /// The bodies are written by JSONValue since the gateway left full Foundation: the bytes
    /// are those JSONSerialization (sorted keys) wrote for the same content before.
    func testBodiesAreTheBytesJSONSerializationWrote() async throws {
        let providers = AdminProviders(
            publisherStatus: { PublisherStatus(state: "connected", detail: "mqtts://broker/x", publishedTotal: 7) },
            bluetoothStatus: { BluetoothStatus(controller: "powered on", sensors: [:]) })
        let fixture = try fixture(providers: providers)
        let started = await fixture.api.respond(to: AdminRequest(method: "POST", target: "/v1/sessions",
                                                                 body: Array(#"{"device":"AA:01","userId":"u"}"#.utf8)))
        XCTAssertEqual(started.status, 201)
        let id = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(started.body)) as? [String: Any])?["id"] as? String)
        let hazards = await fixture.api.respond(to: AdminRequest(method: "POST", target: "/v1/sessions/\(id)/hazards",
                                                                 body: Array(#"{"fall":2,"slip":1}"#.utf8)))
        XCTAssertEqual(hazards.status, 200)
        for target in ["/v1/status", "/v1/sensors", "/v1/sessions?range=all", "/v1/sessions/\(id)", "/v1/medals?user=u", "/v1/documents/records",
                       "/v1/nowhere"] {
            let response = await fixture.api.respond(to: AdminRequest(method: "GET", target: target))
            let object = try JSONSerialization.jsonObject(with: Data(response.body))
            let expected = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) + [0x0A]
            XCTAssertEqual(String(decoding: response.body, as: UTF8.self), String(decoding: expected, as: UTF8.self), target)
        }
    }

    /// Concurrent status reads share computations; a read after a mutation sees it.
    func testConcurrentStatusReadsAreCoalescedButNeverStale() async throws {
        let calls = LockedArray()
        // The first computation is held until all 40 reads were issued: they overlap it.
        let issued = Watched(0)
        let providers = AdminProviders(publisherStatus: {
            calls.append(1)
            _ = await issued.wait(timeout: 10) { $0 >= 40 }
            return PublisherStatus(state: "connected")
        })
        let fixture = try fixture(providers: providers)
        let api = fixture.api
        let statuses = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    issued.update { $0 += 1 }
                    return await api.respond(to: AdminRequest(method: "GET", target: "/v1/status")).status
                }
            }
            return await group.reduce(into: [Int]()) { $0.append($1) }
        }
        XCTAssertEqual(statuses, Array(repeating: 200, count: 40))
        XCTAssertLessThan(calls.values.count, 10, "40 concurrent reads should share a few computations")

        let started = await api.respond(to: AdminRequest(method: "POST", target: "/v1/sessions", body: Array(#"{"device":"AA:01","userId":"u"}"#.utf8)))
        XCTAssertEqual(started.status, 201)
        let status = await api.respond(to: AdminRequest(method: "GET", target: "/v1/status"))
        let sensors = (try JSONSerialization.jsonObject(with: Data(status.body)) as? [String: Any])?["sensors"] as? [[String: Any]]
        XCTAssertEqual(sensors?.first?["address"] as? String, "AA:01")
    }

    /// Metric values follow capture: received, missing, duplicates, gaps, commits, sessions.
    func testMetricsCountWhatCaptureDid() async throws {
        let fixture = try fixture()
        let sensor = SensorIdentity(device: "AA:01", userId: "u")
        let t0 = 1_795_000_000_000.0
        func samples(_ range: Range<Int>) -> [StoredSample] { range.map { StoredSample(timestampMs: t0 + Double($0) * 20, x: 1, y: 2, z: 3) } }
        try await fixture.engine.startSession(sensor: sensor, atMs: t0)
        try await fixture.engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: 0, samples: samples(0..<50))
        try await fixture.engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: 60, samples: samples(60..<100))
        try await fixture.engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: 90, samples: samples(90..<100))
        try await fixture.engine.flush()
        let response = await fixture.api.respond(to: AdminRequest(method: "GET", target: "/metrics"))
        let values = Dictionary(String(decoding: response.body, as: UTF8.self).split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
            let parts = line.split(separator: " ")
            return parts.count == 2 ? (String(parts[0]), Double(parts[1]) ?? -1) : nil
        }, uniquingKeysWith: { $1 })
        XCTAssertEqual(values["gyrogate_samples_received_total"], 90)
        XCTAssertEqual(values["gyrogate_samples_expected"], 100)
        XCTAssertEqual(values["gyrogate_samples_missing_total"], 10)
        XCTAssertEqual(values["gyrogate_samples_duplicate_total"], 10)
        XCTAssertEqual(values["gyrogate_gaps_total"], 1)
        XCTAssertEqual(values["gyrogate_sessions_started_total"], 1)
        XCTAssertEqual(values["gyrogate_sessions_open"], 1)
        XCTAssertGreaterThanOrEqual(values["gyrogate_commits_total"] ?? 0, 2)
        XCTAssertGreaterThan(values["gyrogate_outbox_depth"] ?? 0, 0)
        XCTAssertGreaterThan(values["gyrogate_outbox_bytes"] ?? 0, 0)
        XCTAssertGreaterThan(values["gyrogate_store_bytes"] ?? 0, 0)
        XCTAssertGreaterThan(values["gyrogate_process_resident_memory_bytes"] ?? 0, 1_000_000)
    }

    /// Sessions show where their missing samples went, `storeFull` evictions apart from sensor losses.
    func testSessionJSONBreaksMissingSamplesDownByReason() throws {
        var session = SessionRecord(id: "u___1", userId: "u", device: "d", startMs: 0, localDate: "2026-01-01")
        session.gaps = [
            GapRange(stream: "gyro", fromIndex: 0, toIndex: 3999, fromMs: 0, toMs: 79_980, missing: 4000, reason: .storeFull),
            GapRange(stream: "gyro", fromIndex: 4500, toIndex: 4509, fromMs: 90_000, toMs: 90_180, missing: 10, reason: .notReceived),
            GapRange(stream: "gyro", fromIndex: 6000, toIndex: 6499, fromMs: 120_000, toMs: 129_980, missing: 500, reason: .storeFull),
        ]
        session.samples = 5490
        session.expected = 10_000
        let object = AdminJSON.session(session)
        XCTAssertEqual(object["missing"], .integer(4510))
        XCTAssertEqual(object["gaps"], .integer(3))
        XCTAssertEqual(object["missingByReason"], ["storeFull": 4500, "notReceived": 10])
        let text = String(decoding: AdminResponse.json(200, object).body, as: UTF8.self)
        XCTAssertTrue(text.contains(#""missingByReason":{"notReceived":10,"storeFull":4500}"#), text)
    }

    func testQueryAndPathDecoding() {
        let request = AdminRequest(method: "GET", target: "/v1/sessions?range=week&user=a%40b+c")
        XCTAssertEqual(request.path, "/v1/sessions")
        XCTAssertEqual(request.query, ["range": "week", "user": "a@b c"])
        XCTAssertEqual(AdminAPI.segments("/v1/documents/records/a%2Fb"), ["v1", "documents", "records", "a/b"])
        XCTAssertNil(AdminAPI.segments("/v1/%zz"))
        XCTAssertNil(AdminAPI.segments("v1/status"))
        XCTAssertEqual(AdminAPI.match(["v1", "sessions", "x", "stop"], ["v1", "sessions", "*", "stop"]), ["x"])
        XCTAssertNil(AdminAPI.match(["v1", "sessions", "", "stop"], ["v1", "sessions", "*", "stop"]))
    }

    func testAccessPolicy() throws {
        let open = try AdminAccessPolicy()
        XCTAssertTrue(open.permits(nil))
        let byUid = try AdminAccessPolicy(allowedUids: [1000])
        XCTAssertTrue(byUid.permits(PeerCredentials(pid: 1, uid: 1000, gid: 1000)))
        XCTAssertFalse(byUid.permits(PeerCredentials(pid: 1, uid: 1001, gid: 1000)))
        XCTAssertFalse(byUid.permits(nil))
        let byGroup = try AdminAccessPolicy(allowedGroups: ["daemon"])
        XCTAssertTrue(byGroup.permits(PeerCredentials(pid: 1, uid: 4321, gid: 1)))
        XCTAssertFalse(byGroup.permits(PeerCredentials(pid: 1, uid: 4321, gid: 4321)))
        XCTAssertThrowsError(try AdminAccessPolicy(allowedGroups: ["no-such-group-gyrogate"]))
    }

    /// An idle client and a slow one (a byte every 100 ms) are cut off at the request timeout.
    func testIdleAndSlowClientsAreCutOff() async throws {
        let fixture = try fixture()
        var limits = AdminServerLimits()
        limits.requestTimeout = .milliseconds(500)
        var settings = fixture.api.configuration.admin
        settings.mode = 0o600
        let server = AdminServer(api: fixture.api, settings: settings, limits: limits, logger: testLogger())
        let channel = try await server.bind()
        defer { channel.close(promise: nil) }
        let path = fixture.socketPath

        let idle = try await Task.detached {
            let client = AdminClient(socketPath: path, timeoutSeconds: 5)
            let fd = try client.connect()
            defer { close(fd) }
            let start = Date()
            var byte: UInt8 = 0
            let count = recv(fd, &byte, 1, 0)
            return (count, Date().timeIntervalSince(start))
        }.value
        XCTAssertEqual(idle.0, 0, "the server should close an idle connection")
        XCTAssertLessThan(idle.1, 3)

        let slow = try await Task.detached {
            let client = AdminClient(socketPath: path, timeoutSeconds: 5)
            let fd = try client.connect()
            defer { close(fd) }
            let start = Date()
            for byte in Array("GET /v1/status HTTP/1.1\r\nHost: slow\r\nX-Padding: aaaaaaaaaaaaaaaaaaaa\r\n\r\n".utf8) {
                if send(fd, [byte], 1, Int32(MSG_NOSIGNAL)) < 0 { break }
                // A byte every 100 ms, or sooner the server's close (the descriptor turns readable: EOF).
                var closing = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&closing, 1, 100) > 0 { break }
            }
            return Date().timeIntervalSince(start)
        }.value
        XCTAssertLessThan(slow, 3, "a slow client should be cut off before it finishes")
        // The server still answers others.
        let status = try await Task.detached { try AdminClient(socketPath: path).request("GET", "/v1/status").status }.value
        XCTAssertEqual(status, 200)
    }

    /// The progress rule alone: failing commits, commits, idleness, old uncommitted samples.
    func testTheProgressRule() {
        var before = CaptureCounters()
        before.commits = 10
        before.failedCommits = 1
        var committed = before
        committed.commits = 11
        var failing = before
        failing.failedCommits = 3
        let stall = WatchdogService.stall
        XCTAssertNil(stall(before, committed, 1, .seconds(60), .seconds(10)), "a commit is progress")
        XCTAssertNil(stall(before, before, 0, nil, .seconds(10)), "no session: idle by design")
        XCTAssertNil(stall(before, before, 2, nil, .seconds(10)), "nothing waiting: a quiet sensor")
        XCTAssertNil(stall(before, before, 2, .seconds(3), .seconds(10)), "waiting less than stallAfter")
        XCTAssertNotNil(stall(before, before, 2, .seconds(11), .seconds(10)), "samples waiting with no commit")
        XCTAssertNotNil(stall(before, failing, 0, nil, .seconds(10)), "commits failing, none succeeding")
        var both = failing
        both.commits = 11
        XCTAssertNil(stall(before, both, 1, nil, .seconds(10)), "a retry that succeeded is progress")
    }

    /// `Expect: 100-continue` gets the interim response before the final one.
    func testExpectContinue() async throws {
        let fixture = try fixture()
        let channel = try await AdminServer(api: fixture.api, settings: fixture.api.configuration.admin, logger: testLogger()).bind()
        defer { channel.close(promise: nil) }
        let path = fixture.socketPath
        let text = try await Task.detached {
            let body = #"{"device":"AA:01","userId":"u"}"#
            let raw = "POST /v1/sessions HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            return String(decoding: try AdminClient(socketPath: path).exchange(Array(raw.utf8)), as: UTF8.self)
        }.value
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\n"), text)
    }

    /// Beyond `maxConnections`, a connection is answered 503 at once; freed slots are reused.
    func testConnectionsBeyondTheLimitAreRefused() async throws {
        let fixture = try fixture()
        var limits = AdminServerLimits()
        limits.maxConnections = 2
        // One event loop: connections are accepted and counted in the order they were made, and a
        // close is counted before anything that loop accepts after it.
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = AdminServer(api: fixture.api, settings: fixture.api.configuration.admin, limits: limits, logger: testLogger(),
                                 eventLoopGroup: group)
        let channel = try await server.bind()
        defer {
            channel.close(promise: nil)
            group.shutdownGracefully { _ in }
        }
        let path = fixture.socketPath
        let statuses = try await Task.detached {
            let client = AdminClient(socketPath: path, timeoutSeconds: 5)
            // Two idle connections, made (and so accepted) before the third.
            let idle = try [client.connect(), client.connect()]
            let refused = try client.request("GET", "/v1/status").status
            // Closed: the client's end first; the server's EOF in answer says it closed (and counted) them.
            for fd in idle {
                shutdown(fd, Int32(SHUT_WR))
                var buffer = [UInt8](repeating: 0, count: 65536)
                while recv(fd, &buffer, buffer.count, 0) > 0 {}
                close(fd)
            }
            let admitted = try client.request("GET", "/v1/status").status
            return (refused, admitted)
        }.value
        XCTAssertEqual(statuses.0, 503)
        XCTAssertEqual(statuses.1, 200)
    }

    /// The watchdog's progress rule with commits stopped: an open session whose samples wait
    /// uncommitted longer than `stallAfter` without a commit is a stall.
    func testTheWatchdogSeesCommitsThatStop() async throws {
        let fixture = try fixture(commitInterval: .seconds(3600))
        // stallAfter zero: samples waiting at all, with no commit since, are a stall (no wait for it).
        let watchdog = WatchdogService(notifier: SystemdNotifier(environment: [:]), store: fixture.store, engine: fixture.engine,
                                       logger: testLogger(), stallAfter: .zero, environment: [:])
        let idle = await watchdog.check(previous: nil)
        XCTAssertTrue(idle.healthy, "no session: idle by design")
        let sensor = SensorIdentity(device: "AA:01", userId: "u")
        try await fixture.engine.startSession(sensor: sensor, atMs: 1_795_000_000_000)
        let afterStart = await watchdog.check(previous: nil)
        XCTAssertTrue(afterStart.healthy)
        // Samples appended; with no committer running and a long interval they stay uncommitted.
        try await fixture.engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: 0,
                                        samples: (0..<10).map { StoredSample(timestampMs: 1_795_000_000_000 + Double($0) * 20, x: 0, y: 0, z: 0) })
        let stalled = await watchdog.check(previous: afterStart.counters)
        XCTAssertFalse(stalled.healthy, stalled.status)
        XCTAssertTrue(stalled.status.contains("capture stalled"), stalled.status)
        try await fixture.engine.flush()
        let resumed = await watchdog.check(previous: stalled.counters)
        XCTAssertTrue(resumed.healthy, resumed.status)
    }
}
