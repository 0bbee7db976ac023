import Admin
import Foundation
import XCTest

/// Malformed and hostile requests against a real daemon: each gets the right status or is cut
/// off, the store stays as it was, and the daemon keeps answering.
final class HostileRequestTests: XCTestCase {
    /// The status of the response to `raw`, or `nil` if the connection closed without one.
    func status(_ client: AdminClient, _ raw: String, shutdownWrite: Bool = false) -> Int? {
        status(client, Array(raw.utf8), shutdownWrite: shutdownWrite)
    }

    func status(_ client: AdminClient, _ raw: [UInt8], shutdownWrite: Bool = false) -> Int? {
        guard let bytes = try? client.exchange(raw, shutdownWrite: shutdownWrite), !bytes.isEmpty else { return nil }
        return (try? client.parse(bytes))?.status
    }

    /// What must not change: sessions, documents, the outbox, the capture counters.
    func snapshot(_ client: AdminClient) throws -> String {
        let sessions = try client.request("GET", "/v1/sessions?range=all").text
        let records = try client.request("GET", "/v1/documents/records").text
        let outbox = try client.request("GET", "/v1/status").object["outbox"]?["depth"]?.int
        let counters = try client.request("GET", "/metrics").text.split(separator: "\n")
            .filter { $0.hasPrefix("gyrogate_sessions") || $0.hasPrefix("gyrogate_commits") }
        return "\(sessions)\n\(records)\n\(outbox ?? -1)\n\(counters)"
    }

    func testMalformedAndHostileRequestsGetTheRightStatusAndChangeNothing() throws {
        let daemon = try DaemonProcess()
        defer { daemon.stop() }
        let client = daemon.client
        let started = try client.request("POST", "/v1/sessions", json: ["device": "C4:BE:84:00:00:01"])
        let id = try XCTUnwrap(started.object["id"]?.string)
        let before = try snapshot(client)

        func post(_ path: String, _ body: String, extra: String = "") -> String {
            "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\(extra)\r\n\(body)"
        }
        let long = String(repeating: "a", count: 9_000)
        let manyHeaders = (0..<400).map { "X-Filler-\($0): \(String(repeating: "b", count: 40))\r\n" }.joined()
        let cases: [(name: String, raw: String, expected: Set<Int?>)] = [
            ("request line over 8 KiB", "GET /v1/status?x=\(long) HTTP/1.1\r\nHost: x\r\n\r\n", [414]),
            ("headers over 16 KiB", "GET /v1/status HTTP/1.1\r\nHost: x\r\n\(manyHeaders)\r\n", [431]),
            // Empty lines before the request line (the parser skips them) do not reset the limits.
            ("request line over 8 KiB after an empty line", "\r\nGET /v1/status?x=\(long) HTTP/1.1\r\nHost: x\r\n\r\n", [414]),
            ("headers over 16 KiB after two empty lines", "\r\n\r\nGET /v1/status HTTP/1.1\r\nHost: x\r\n\(manyHeaders)\r\n", [431]),
            ("one header over 16 KiB", "GET /v1/status HTTP/1.1\r\nX-Big: \(String(repeating: "c", count: 17_000))\r\n\r\n", [431]),
            ("declared body over 64 KiB", "POST /v1/sessions HTTP/1.1\r\nContent-Length: 70000\r\n\r\n\(String(repeating: "{", count: 70_000))", [413]),
            ("chunked body over 64 KiB", "POST /v1/sessions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                + String(repeating: "4000\r\n\(String(repeating: "x", count: 0x4000))\r\n", count: 5) + "0\r\n\r\n", [413]),
            ("bad JSON", post("/v1/sessions", "{\"device\": "), [400]),
            ("JSON array body", post("/v1/sessions", "[1,2,3]"), [400]),
            ("empty body", post("/v1/sessions", ""), [400]),
            ("user id with a slash", post("/v1/sessions", "{\"device\":\"AA:01\",\"userId\":\"a/b\"}"), [400]),
            ("user id with MQTT wildcard", post("/v1/sessions", "{\"device\":\"AA:01\",\"userId\":\"a+#\"}"), [400]),
            ("device of the wrong type", post("/v1/sessions", "{\"device\":42}"), [400]),
            ("hazard intensity as text", post("/v1/sessions/\(id)/hazards", "{\"fall\":\"high\"}"), [400]),
            ("negative hazard", post("/v1/sessions/\(id)/hazards", "{\"fall\":-1}"), [400]),
            ("hazard name too long", post("/v1/sessions/\(id)/hazards", "{\"\(String(repeating: "h", count: 65))\":1}"), [400]),
            ("hazards on an unknown session", post("/v1/sessions/nobody___1/hazards", "{\"fall\":1}"), [404]),
            ("unknown path", "GET /v2/status HTTP/1.1\r\nHost: x\r\n\r\n", [404]),
            ("unknown method", "PATCH /v1/status HTTP/1.1\r\nHost: x\r\n\r\n", [405]),
            ("wrong method", "DELETE /v1/status HTTP/1.1\r\nHost: x\r\n\r\n", [405]),
            ("path traversal", "GET /v1/documents/../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", [400]),
            ("encoded traversal", "GET /v1/documents/records/..%2f..%2fetc%2fpasswd HTTP/1.1\r\nHost: x\r\n\r\n", [400]),
            ("encoded dot segments", "GET /v1/documents/records/%2e%2e HTTP/1.1\r\nHost: x\r\n\r\n", [400]),
            ("empty segment", "GET /v1/documents/records//x HTTP/1.1\r\nHost: x\r\n\r\n", [400]),
            ("$SYS topic", "GET /v1/documents/%24SYS/broker HTTP/1.1\r\nHost: x\r\n\r\n", [400]),
            ("NUL in a path", "GET /v1/documents/records/a%00b HTTP/1.1\r\nHost: x\r\n\r\n", [400]),
            ("bad percent-encoding", "GET /v1/status%zz HTTP/1.1\r\nHost: x\r\n\r\n", [400]),
            ("binary garbage", "\u{01}\u{02}\u{03} HELLO\r\n\r\n", [400, nil]),
            ("HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", [400, 404, 405, nil]),
            ("header without colon", "GET /v1/status HTTP/1.1\r\nno colon here\r\n\r\n", [400]),
            ("conflicting content lengths", "POST /v1/sessions HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 9\r\n\r\n{}", [400]),
            ("chunked plus content length", "POST /v1/sessions HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", [400]),
            ("negative content length", "POST /v1/sessions HTTP/1.1\r\nContent-Length: -5\r\n\r\n", [400]),
            ("bad HTTP version", "GET /v1/status HTTP/9.9\r\nHost: x\r\n\r\n", [400, 505, nil]),
        ]
        XCTAssertGreaterThanOrEqual(cases.count, 20)
        for item in cases {
            let got = status(client, item.raw)
            XCTAssertTrue(item.expected.contains(got), "\(item.name): got \(got.map(String.init) ?? "no response"), expected \(item.expected)")
        }

        // A body that is not JSON is answered with what is wrong and where.
        let badBody = try client.parse(try client.exchange(Array(post("/v1/sessions", "{\"device\": ").utf8)))
        XCTAssertEqual(badBody.status, 400)
        XCTAssertEqual(try badBody.json()["error"]?["message"]?.string,
                       "the body is not valid JSON: unexpected end of input at line 1, column 12 (expected a value)")

        // Half-open connections: a partial head, a short body, then the client stops writing.
        XCTAssertEqual(status(client, "GET /v1/sta", shutdownWrite: true), nil)
        XCTAssertTrue([nil, 400].contains(status(client, "POST /v1/sessions HTTP/1.1\r\nContent-Length: 50\r\n\r\n{\"dev", shutdownWrite: true)))
        // Connections opened and dropped without a byte.
        for _ in 0..<20 { if let fd = try? client.connect() { close(fd) } }

        XCTAssertEqual(try snapshot(client), before, "hostile requests changed the store")
        XCTAssertTrue(daemon.process.isRunning)
        XCTAssertEqual(try client.request("GET", "/v1/status").status, 200)
    }

    func testTwoHundredConcurrentClientsAreAllAnswered() throws {
        let daemon = try DaemonProcess()
        defer { daemon.stop() }
        let client = daemon.client
        let statuses = LockedArray()
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            let target = index % 2 == 0 ? "/v1/status" : "/metrics"
            statuses.append((try? client.request("GET", target))?.status ?? -1)
        }
        XCTAssertEqual(statuses.values.count, 200)
        XCTAssertEqual(statuses.values.filter { $0 == 200 }.count, 200, "statuses: \(Dictionary(grouping: statuses.values, by: { $0 }).mapValues(\.count))")
        XCTAssertTrue(daemon.process.isRunning)
    }
}

final class LockedArray: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Int] = []
    func append(_ value: Int) { lock.lock(); storage.append(value); lock.unlock() }
    var values: [Int] { lock.lock(); defer { lock.unlock() }; return storage }
}
