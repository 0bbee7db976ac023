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
        let connected = await broker.waitForLog(containing: "New client connected")
        XCTAssertTrue(connected)
        // Two PINGREQs as they reach the broker, about 5 s apart: past 7.5 s the broker would have
        // dropped a client that sent none.
        let pinged = await broker.output(timeout: 30) { $0.filter { $0.contains("Received PINGREQ") }.count >= 2 }
        XCTAssertTrue(pinged, "a PINGREQ about every keep-alive while idle")
        let status = await gateway.publisher.status
        XCTAssertEqual(status.state, .connected)
        XCTAssertEqual(status.connections, 1, "the broker never dropped the idle connection")
        XCTAssertFalse(broker.logLines.contains { $0.contains("has exceeded timeout") }, broker.logLines.joined(separator: "\n"))
        await gateway.stop()
        broker.stop()
    }
}
