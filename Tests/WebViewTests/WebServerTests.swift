import Admin
import Capture
import Foundation
import GatewayConfig
import GyroStore
import NIOCore
import NIOPosix
import TestSupport
@testable import WebView
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// The live view's listener on a real loopback socket: what it serves, what it refuses, the
/// token, the viewer cap and the event stream.
final class WebServerTests: XCTestCase {
    struct Fixture {
        let directory: TemporaryDirectory
        let tap: LiveTap
        let feed: CaptureFeed
        let channel: any Channel
        let port: Int
    }

    func fixture(token: String? = nil, maxViewers: Int = 4) async throws -> Fixture {
        let directory = try TemporaryDirectory("gyrogate-web")
        let json = """
            {"gatewayId": "web-test", "timeZone": "UTC", "bluetooth": {"transport": "hci:0"}, "mqtt": {"host": "broker"},
             "sensors": [{"address": "AA:AA:AA:AA:AA:01", "userId": "u", "name": "Left"}],
             "admin": {"socketPath": "\(directory.file("admin.sock"))"}}
            """
        let configuration = try GatewayConfiguration.parse(Data(json.utf8), baseDirectory: directory.path)
        let store = try GyroStore.open(directory: directory.file("data"), logger: testLogger())
        let engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: 100, commitInterval: .milliseconds(200)),
                                   calendar: PeriodCalendar(timeZone: .utc), logger: testLogger())
        let api = AdminAPI(configuration: configuration, store: store, engine: engine, version: "test", access: try AdminAccessPolicy())
        var settings = WebSettings(host: "127.0.0.1", port: 0, token: token.map(Secret.init))
        settings.maxViewers = maxViewers
        let tap = LiveTap(pointsPerSecond: 10)
        engine.feed.setLiveTap(tap)
        let sensors = FixedSensors([LiveSensor(address: "AA:AA:AA:AA:AA:01", userId: "u", state: "streaming", batteryPercent: 80, odrHz: 100)])
        let server = WebServer(settings: settings, api: api, tap: tap, sensors: sensors, logger: testLogger())
        let channel = try await server.bind()
        addTeardownBlock { try? await channel.close() }
        return Fixture(directory: directory, tap: tap, feed: engine.feed, channel: channel, port: try XCTUnwrap(channel.localAddress?.port))
    }

    /// Sends `request` and reads what comes back within `seconds` (or until the server closes).
    func exchange(_ port: Int, _ request: String, seconds: Double = 2) throws -> String {
        try Self.exchange(port, request, seconds: seconds)
    }

    /// A connected socket that has sent `request`; the caller closes it.
    static func open(_ port: Int, _ request: String) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        XCTAssertEqual(connected, 0)
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = request.utf8CString.withUnsafeBufferPointer { send(fd, $0.baseAddress, $0.count - 1, 0) }
        return fd
    }

    static func exchange(_ port: Int, _ request: String, seconds: Double) throws -> String {
        let fd = open(port, request)
        defer { close(fd) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { break }
            if count > 0 { received += buffer[0..<count] }
        }
        return String(decoding: received, as: UTF8.self)
    }

    func get(_ port: Int, _ target: String, method: String = "GET", host: String = "127.0.0.1", headers: String = "",
             seconds: Double = 2) throws -> String {
        try Self.exchange(port, "\(method) \(target) HTTP/1.1\r\nHost: \(host)\r\n\(headers)Content-Length: 0\r\n\r\n", seconds: seconds)
    }

    func testServesThePageAndRefusesWhatWouldChangeState() async throws {
        let f = try await fixture()
        let page = try get(f.port, "/")
        XCTAssertTrue(page.hasPrefix("HTTP/1.1 200"), page)
        XCTAssertTrue(page.contains("content-type: text/html") && page.contains("app.js"))
        XCTAssertTrue(try get(f.port, "/app.js").contains("EventSource"))
        let status = try get(f.port, "/api/status")
        XCTAssertTrue(status.hasPrefix("HTTP/1.1 200") && status.contains("\"gatewayId\":\"web-test\""), status)
        for method in ["POST", "PUT", "DELETE", "PATCH"] {
            XCTAssertTrue(try get(f.port, "/api/status", method: method).hasPrefix("HTTP/1.1 405"), method)
        }
        XCTAssertTrue(try get(f.port, "/api/sessions?range=year").hasPrefix("HTTP/1.1 400"))
        XCTAssertTrue(try get(f.port, "/v1/status").hasPrefix("HTTP/1.1 404"), "the admin API's own routes are not reachable")
        XCTAssertTrue(try get(f.port, "/api/status", host: "rebound.example.com").hasPrefix("HTTP/1.1 403"))
        XCTAssertTrue(try get(f.port, "/api/status", host: "127.0.0.1:8097").hasPrefix("HTTP/1.1 200"))
        XCTAssertTrue(try exchange(f.port, "GARBAGE\r\n\r\n").hasPrefix("HTTP/1.1 400"))
    }

    func testTheTokenGuardsTheDataNotThePage() async throws {
        let token = "a-token-of-twenty-chars"
        let f = try await fixture(token: token)
        XCTAssertTrue(try get(f.port, "/", host: "gateway.local").hasPrefix("HTTP/1.1 200"))
        XCTAssertTrue(try get(f.port, "/api/status", host: "gateway.local").hasPrefix("HTTP/1.1 401"))
        XCTAssertTrue(try get(f.port, "/events", host: "gateway.local").hasPrefix("HTTP/1.1 401"))
        XCTAssertTrue(try get(f.port, "/api/status?token=wrong-token-of-twenty-c").hasPrefix("HTTP/1.1 401"))
        XCTAssertTrue(try get(f.port, "/api/status?token=\(token)", host: "gateway.local").hasPrefix("HTTP/1.1 200"))
        XCTAssertTrue(try get(f.port, "/api/status", host: "gateway.local", headers: "Authorization: Bearer \(token)\r\n").hasPrefix("HTTP/1.1 200"))
    }

    func testTheEventStreamSendsHistoryThenWhatWasMissedAndCapsViewers() async throws {
        let f = try await fixture(maxViewers: 1)
        let sensor = SensorIdentity(device: "AA:AA:AA:AA:AA:01", userId: "u")
        for n in 0..<100 {
            f.feed.append(sensor: sensor, stream: .gyro, odrHz: 100, range: 2000, firstIndex: Int64(n), gapReason: nil, receivedAt: .now, count: 1) { _ in
                StoredSample(timestampMs: Double(n) * 10, x: 1.5, y: -2.25, z: 0)
            }
        }
        let first = try get(f.port, "/events", seconds: 1.5)
        XCTAssertTrue(first.contains("content-type: text/event-stream"), first)
        XCTAssertTrue(first.contains("event: points") && first.contains("[0,1.50,-2.25,0.00,0]"), first)
        XCTAssertTrue(first.contains("event: sensors") && first.contains("\"name\":\"Left\""), first)
        let last = f.tap.points(after: 0).last
        XCTAssertTrue(first.contains("id: \(last)"))
        // Reconnecting with the last id: nothing was missed, so no points come.
        let resumed = try get(f.port, "/events", headers: "Last-Event-ID: \(last)\r\n", seconds: 1.5)
        XCTAssertFalse(resumed.contains("event: points"), resumed)
        XCTAssertTrue(resumed.contains("event: sensors"))

        // One viewer is the cap: a second is refused while the first holds its stream.
        let holder = Self.open(f.port, "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        defer { close(holder) }
        // The server holds the stream for it once it answered: read the response head.
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(10)
        while !String(decoding: head, as: UTF8.self).contains("\r\n\r\n"), Date() < deadline {
            let count = recv(holder, &buffer, buffer.count, 0)  // returns within the 200 ms SO_RCVTIMEO
            if count == 0 { break }
            if count > 0 { head += buffer[0..<count] }
        }
        XCTAssertTrue(String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 200"), String(decoding: head, as: UTF8.self))
        XCTAssertTrue(try get(f.port, "/events", seconds: 1).hasPrefix("HTTP/1.1 503"))
    }

    func testPointsAreWrittenCompactly() {
        XCTAssertEqual(LiveEncoding.rounded(1.005), "1.00")
        XCTAssertEqual(LiveEncoding.rounded(-0.5), "-0.50")
        XCTAssertEqual(LiveEncoding.rounded(-2000.126), "-2000.13")
        XCTAssertEqual(LiveEncoding.rounded(.nan), "0")
        XCTAssertTrue(WebHTTPHandler.constantTimeEqual(Array("abc".utf8), Array("abc".utf8)))
        XCTAssertFalse(WebHTTPHandler.constantTimeEqual(Array("abcd".utf8), Array("abc".utf8)))
        XCTAssertFalse(WebHTTPHandler.constantTimeEqual(Array("ab".utf8), Array("abc".utf8)))
        XCTAssertFalse(WebHTTPHandler.constantTimeEqual([], Array("abc".utf8)))
    }
}

/// Sensors whose state never changes; their ticks are timers of an event loop of their own.
struct FixedSensors: LiveSensorSource {
    let list: [LiveSensor]
    let loop = MultiThreadedEventLoopGroup.singleton.next()

    init(_ list: [LiveSensor]) { self.list = list }

    func sensors() async -> [LiveSensor] { list }

    func ticks(first: Double, every: Double, tolerance: Double, _ tick: @escaping @Sendable ([LiveSensor]) -> Void) -> any LiveSensorTicks {
        let list = self.list
        return Ticks(task: loop.scheduleRepeatedTask(initialDelay: .nanoseconds(Int64(first * 1e9)), delay: .nanoseconds(Int64(every * 1e9))) { _ in
            tick(list)
        })
    }

    struct Ticks: LiveSensorTicks {
        let task: RepeatedTask
        func stop() { task.cancel() }
    }
}
