import Foundation
import GatewayConfig
@testable import MQTTPublisher
import TestSupport
import XCTest

/// The fleet's coordination connection against a real mosquitto: a report kept retained, seen by
/// another gateway's channel, and the final (offline) report a stopping gateway leaves behind.
/// Under ThreadSanitizer (run-tests.sh) this also checks the bridge from libmosquitto's thread.
final class FleetChannelTests: XCTestCase {
    final class Reports: @unchecked Sendable {
        private let lock = NSLock()
        private var latest: [String: [UInt8]] = [:]
        private var waiters: [(String, ([UInt8]) -> Bool, XCTestExpectation)] = []
        func add(_ gateway: String, _ payload: [UInt8]) {
            lock.lock()
            latest[gateway] = payload
            let ready = waiters.filter { $0.0 == gateway && $0.1(payload) }
            waiters.removeAll { $0.0 == gateway && $0.1(payload) }
            lock.unlock()
            for waiter in ready { waiter.2.fulfill() }
        }
        func expect(_ gateway: String, _ test: XCTestCase, where matches: @escaping ([UInt8]) -> Bool) -> XCTestExpectation {
            let expectation = test.expectation(description: "a report of \(gateway)")
            lock.lock()
            if let payload = latest[gateway], matches(payload) {
                lock.unlock()
                expectation.fulfill()
                return expectation
            }
            waiters.append((gateway, matches, expectation))
            lock.unlock()
            return expectation
        }
    }

    func channel(_ gateway: String, broker: MosquittoBroker, reports: Reports, up: XCTestExpectation? = nil) throws -> FleetChannel {
        let configuration = PublisherConfiguration(host: "127.0.0.1", port: broker.port, clientId: "test-\(gateway)-\(UUID().uuidString.prefix(8))",
                                                   gatewayId: gateway)
        let handlers = FleetChannel.Handlers(connected: { if $0 { up?.fulfill() } }, report: { reports.add($0, $1) })
        return try XCTUnwrap(try FleetChannel(configuration: configuration, keepAliveSeconds: 5, will: Array("offline".utf8),
                                              handlers: handlers, logger: testLogger()))
    }

    func testAReportIsRetainedSeenByTheOthersAndLeftOfflineAtStop() throws {
        let broker = try MosquittoBroker()
        try broker.start()
        defer { broker.stop() }
        let seenByB = Reports(), seenByA = Reports()
        let aUp = expectation(description: "gw-a connected")
        let a = try channel("gw-a", broker: broker, reports: seenByA, up: aUp)
        a.publish(Array("first".utf8))
        a.start()
        wait(for: [aUp], timeout: 10)
        a.publish(Array("second".utf8))
        // gw-b joins later: the retained report reaches it at once.
        let b = try channel("gw-b", broker: broker, reports: seenByB)
        let second = seenByB.expect("gw-a", self) { $0 == Array("second".utf8) }
        b.start()
        wait(for: [second], timeout: 10)
        b.publish(Array("b here".utf8))
        wait(for: [seenByA.expect("gw-b", self) { $0 == Array("b here".utf8) }], timeout: 10)

        let offline = seenByB.expect("gw-a", self) { $0 == Array("gone".utf8) }
        a.stop(final: Array("gone".utf8))
        wait(for: [offline], timeout: 10)
        b.stop(final: Array("gone too".utf8))
    }

    func testAnUnreachableBrokerDoesNotHoldUpStop() throws {
        let configuration = PublisherConfiguration(host: "127.0.0.1", port: MosquittoBroker.freePort(), clientId: "test-nobody", gatewayId: "gw-x")
        let channel = try XCTUnwrap(try FleetChannel(configuration: configuration, keepAliveSeconds: 5, will: [],
                                                     handlers: .init(connected: { _ in }, report: { _, _ in }), logger: testLogger()))
        channel.start()
        channel.publish(Array("never sent".utf8))
        channel.stop(final: Array("offline".utf8))
    }
}
