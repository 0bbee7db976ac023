@testable import Fleet
import Foundation
import Logging
import XCTest

/// Session hand-offs through the coordinator (docs/fleet.md, "Sessions across gateways"):
/// a release says `handing` and publishes after the outbox; the gateway that connects next waits
/// for an announced hand-off; taking it clears it; taking one's own back publishes nothing.
final class FleetHandoffTests: XCTestCase {
    let document = Array(#"{"session":"user___1800000000"}"#.utf8)

    /// What the transport was asked to publish, in order; the outbox is "delivered" once released.
    final class Transport: @unchecked Sendable {
        private let lock = NSLock()
        private var sent: [(String, [UInt8])] = []
        private var delivered = false
        private var waiters: [CheckedContinuation<Void, Never>] = []

        var published: [(String, [UInt8])] { lock.lock(); defer { lock.unlock() }; return sent }

        func deliverOutbox() {
            lock.lock()
            delivered = true
            let waiting = waiters
            waiters = []
            lock.unlock()
            for waiter in waiting { waiter.resume() }
        }

        var handoffTransport: HandoffTransport {
            HandoffTransport(outboxDelivered: {
                await withCheckedContinuation { continuation in
                    self.lock.lock()
                    if self.delivered { self.lock.unlock(); continuation.resume() } else { self.waiters.append(continuation); self.lock.unlock() }
                }
            }, publish: { sensor, payload in
                self.lock.withLock { self.sent.append((sensor, payload)) }
                return true
            })
        }
    }

    func coordinator(_ gateway: String, published: Published, transport: Transport) async -> FleetCoordinator {
        let coordinator = FleetCoordinator(gateway: gateway, slots: 2, logger: Logger(label: "test"), now: { 0 }) { published.add($0) }
        await coordinator.useHandoffTransport(transport.handoffTransport)
        await coordinator.channel(up: true)
        return coordinator
    }

    func testAReportRoundTripsWhatItHandsOnAndABadSessionIsNamed() throws {
        let original = FleetReport(gateway: "gw-a", freeSlots: 2, handing: ["S": "user___1800000000"])
        XCTAssertEqual(try FleetReport(parsing: original.encoded(), topicGateway: "gw-a"), original)
        XCTAssertThrowsError(try FleetReport(parsing: Array(#"{"gateway":"gw-a","online":true,"handing":{"S":7}}"#.utf8),
                                             topicGateway: "gw-a")) { error in
            XCTAssertTrue("\(error)".contains("not a session id"), "\(error)")
        }
    }

    func testAReleaseIsAnnouncedThenPublishedAfterTheOutboxAndClearedWhenTaken() async throws {
        let (published, transport) = (Published(), Transport())
        let a = await coordinator("gw-a", published: published, transport: transport)
        await a.holding("S", true)
        await a.release("S", session: "user___1800000000", payload: document)
        let announced = try FleetReport(parsing: published.last ?? [], topicGateway: "gw-a")
        XCTAssertEqual(announced.holding, [], "released: no longer held")
        XCTAssertEqual(announced.handing, ["S": "user___1800000000"])
        XCTAssertTrue(transport.published.isEmpty, "nothing published before the outbox is delivered")
        transport.deliverOutbox()
        while transport.published.isEmpty { await Task.yield() }
        XCTAssertEqual(transport.published.first?.0, "S")
        XCTAssertEqual(transport.published.first?.1, document)

        // Another gateway took it: the broker's retained document is cleared.
        await a.receivedHandoff(sensor: "S", payload: [])
        let after = try FleetReport(parsing: published.last ?? [], topicGateway: "gw-a")
        XCTAssertEqual(after.handing, [:])
        let none = await a.handoffPayload(for: "S")
        XCTAssertNil(none)
    }

    func testTakingOnesOwnHandoffBackPublishesNothingButTheClear() async throws {
        let (published, transport) = (Published(), Transport())
        let a = await coordinator("gw-a", published: published, transport: transport)
        await a.release("S", session: "user___1800000000", payload: document)
        let own = await a.handoffPayload(for: "S")
        XCTAssertEqual(own, document, "the releasing gateway has its own hand-off at once")
        await a.tookHandoff("S", session: "user___1800000000")
        transport.deliverOutbox()
        while transport.published.isEmpty { await Task.yield() }
        XCTAssertFalse(transport.published.contains { $0.1 == self.document }, "the hand-off was taken before it was published")
        XCTAssertEqual(transport.published.first?.1, [], "the clear")
        let report = try FleetReport(parsing: published.last ?? [], topicGateway: "gw-a")
        XCTAssertEqual(report.handing, [:])
    }

    func testTheNextGatewayWaitsForAnAnnouncedHandoffAndTakesNoneUnannounced() async {
        let (published, transport) = (Published(), Transport())
        let b = await coordinator("gw-b", published: published, transport: transport)
        let unannounced = await b.handoffPayload(for: "S")
        XCTAssertNil(unannounced, "no gateway hands S on: nothing to wait for")
        await b.received(topicGateway: "gw-a", payload: FleetReport(gateway: "gw-a", handing: ["S": "user___1800000000"]).encoded())
        let waiting = Task { await b.handoffPayload(for: "S") }
        await b.receivedHandoff(sensor: "S", payload: document)
        let taken = await waiting.value
        XCTAssertEqual(taken, document)
    }
}
