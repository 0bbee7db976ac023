import Foundation
import GyroStore
import MQTTPublisher
import TestSupport
import XCTest

/// `waitUntilDelivered`: what a session hand-off waits for (docs/fleet.md). It waits for the
/// rows the outbox held when asked, not for an idle publisher, which a gateway still capturing
/// other boards rarely is.
final class DeliveredWaitTests: XCTestCase {
    func testReturnsOnceEarlierRowsAreDeliveredWhileLaterOnesAreStuck() async throws {
        try requireBroker()
        let broker = try MosquittoBroker()
        try broker.start()
        let gateway = try Gateway(port: broker.port)
        let subscriber = TestSubscriber()
        try await subscriber.connect(port: broker.port, topics: ["records/+"])

        // The first session's rows are committed before the publisher starts, so the last of
        // them is read before any can be delivered (and deleted).
        let first = try await gateway.session(device: "C4:BE:84:00:00:01", startMs: epochMs, samples: 120)
        let target = try await gateway.store.lastDeliverableSeq()
        XCTAssertNotNil(target)
        gateway.start()
        let drained = await gateway.waitForEmptyOutbox()
        XCTAssertTrue(drained)

        // A broker that takes no more: the next session's rows stay in flight, unacknowledged.
        XCTAssertEqual(broker.signal(SIGSTOP), 0)
        let second = try await gateway.session(device: "C4:BE:84:00:00:02", startMs: epochMs + 60_000, samples: 120)
        let returned = await finishes(within: 30) { await gateway.publisher.waitUntilDelivered(through: target ?? 0) }
        XCTAssertTrue(returned, "waited for rows committed after the ones asked for")
        let depth = await gateway.outboxDepth()
        XCTAssertGreaterThan(depth, 0, "the second session's rows are not delivered")

        // Everything the outbox holds now, the second session included: returns once the broker has it.
        XCTAssertEqual(broker.signal(SIGCONT), 0)
        let all = await finishes(within: 30) { await gateway.publisher.waitUntilDelivered() }
        XCTAssertTrue(all)
        let synced = await subscriber.sync()
        XCTAssertTrue(synced)
        let records = Set(subscriber.messages.map(\.topic))
        XCTAssertTrue(records.isSuperset(of: ["records/\(first.id)", "records/\(second.id)"]), "\(records)")
        subscriber.disconnect()
        await gateway.stop()
        broker.stop()
    }

    func testReturnsWhenThePublisherStops() async throws {
        try requireBroker()
        let broker = try MosquittoBroker()
        try broker.start()
        let gateway = try Gateway(port: broker.port) { $0.shutdownGrace = .milliseconds(200) }
        gateway.start()
        XCTAssertEqual(broker.signal(SIGSTOP), 0)
        try await gateway.session(device: "C4:BE:84:00:00:03", startMs: epochMs, samples: 120)
        let waiter = Task { await gateway.publisher.waitUntilDelivered() }
        await gateway.stop()
        let returned = await finishes(within: 30) { await waiter.value }
        XCTAssertTrue(returned, "a waiter outlived the publisher")
        XCTAssertEqual(broker.signal(SIGCONT), 0)
        broker.stop()
    }
}

/// Whether `body` finished within `seconds` (a guard against a hang, not a timing assertion);
/// a body that hangs is left behind. Waits on the body's end, not on the clock.
private func finishes(within seconds: Double, _ body: @escaping @Sendable () async -> Void) async -> Bool {
    let finished = Watched(false)
    Task { await body(); finished.set(true) }
    return await finished.wait(timeout: seconds) { $0 }
}
