import Foundation
import TestSupport
import XCTest

/// The network thread waits for the broker or the keep-alive only, not a fixed poll: an idle
/// connection must still send its PINGREQs in time and stay up.
final class KeepAliveTests: XCTestCase {
    func testAnIdleConnectionSendsPingsAndStaysUp() async throws {
        try requireBroker()
        let broker = try MosquittoBroker()
        try broker.start()
        // libmosquitto's smallest keep-alive; the broker drops a client silent for 1.5 of them.
        let gateway = try Gateway(port: broker.port) { $0.keepaliveSeconds = 5 }
        gateway.start()
        let connected = await eventually(timeout: 10) { await gateway.publisher.status.state == .connected }
        XCTAssertTrue(connected)
        try await Task.sleep(for: .seconds(13))
        let status = await gateway.publisher.status
        XCTAssertEqual(status.state, .connected)
        XCTAssertEqual(status.connections, 1, "the broker never dropped the idle connection")
        let log = (try? String(contentsOfFile: broker.logFile, encoding: .utf8)) ?? ""
        let pings = log.components(separatedBy: "\n").filter { $0.contains("Received PINGREQ") }.count
        XCTAssertGreaterThanOrEqual(pings, 2, "a PINGREQ about every keep-alive while idle")
        await gateway.stop()
        broker.stop()
    }
}
