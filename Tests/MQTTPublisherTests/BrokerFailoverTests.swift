import Capture
import Foundation
import GatewayConfig
import GyroStore
import MQTTPublisher
import TestSupport
import XCTest

/// Two brokers (`mqtt.hosts`): the first stopped for 30 s while sessions keep closing, then
/// started again. Nothing is lost, nothing is published twice beyond QoS 1's redelivery of what
/// was in flight when the first went away, and both end with the retained documents.
final class BrokerFailoverTests: XCTestCase {
    static let topics = ["realtime_data/+", "records/+"]
    /// The scenario's outage; `GYROGATE_FAILOVER_OUTAGE_S` shortens it when iterating.
    static let outage = Double(ProcessInfo.processInfo.environment["GYROGATE_FAILOVER_OUTAGE_S"] ?? "") ?? 30

    func testAStoppedBrokerFailsOverAndBackWithNothingLostOrTwice() async throws {
        try requireBroker()
        // The first keeps its sessions across the restart: its subscriber gets what follows, and
        // the gateway finds its own session there again (session-present) yet must resync.
        let first = try MosquittoBroker(persistence: true), second = try MosquittoBroker(persistence: false)
        try first.start()
        try second.start()
        let onFirst = TestSubscriber(clientId: "failover-first", cleanSession: false)
        let onSecond = TestSubscriber(clientId: "failover-second", cleanSession: false)
        try await onFirst.connect(port: first.port, topics: Self.topics)
        try await onSecond.connect(port: second.port, topics: Self.topics)
        let gateway = try Gateway(port: first.port, chunkSize: 50) { configuration in
            configuration.fallbackBrokers = [BrokerEndpoint(host: "127.0.0.1", port: second.port)]
            configuration.failbackInterval = .milliseconds(500)
        }
        gateway.start()
        var sessions: [String] = []
        func closeSession(_ n: Int) async throws -> String {
            let id = try await gateway.session(device: "C4:BE:84:00:00:0\(n % 4)", user: "u\(n % 3)",
                                               startMs: epochMs + Double(n) * 60_000, samples: 240).id
            sessions.append(id)
            return id
        }

        for n in 0..<4 { _ = try await closeSession(n) }
        let before = Set(sessions.map { "records/\($0)" })
        let reachedFirst = await onFirst.wait(timeout: 20) { Set(closedRecords($0)).isSuperset(of: before) }
        XCTAssertTrue(reachedFirst, "the first sessions on the first broker")

        // The outage: a session closes, and its record reaches the second broker, again and again.
        first.stop()
        let outageEnds = Date().addingTimeInterval(Self.outage)
        var n = 4
        while Date() < outageEnds {
            let topic = "records/" + (try await closeSession(n))
            n += 1
            let delivered = await onSecond.wait(timeout: 20) { closedRecords($0).contains(topic) }
            XCTAssertTrue(delivered, "\(topic) on the second broker during the outage")
            if !delivered { break }
        }
        let onSecondBeforeBack = sessions
        try first.start()
        let back = await eventually(timeout: 20) {
            let status = await gateway.publisher.status
            return status.state == .connected && status.broker == "127.0.0.1:\(first.port)"
        }
        let afterBack = await gateway.publisher.status
        XCTAssertTrue(back, "back on the first broker: \(afterBack)")
        for k in 0..<4 { _ = try await closeSession(n + k) }
        let drained = await gateway.waitForEmptyOutbox(timeout: 30)
        XCTAssertTrue(drained, "outbox drained")

        // Nothing lost: every chunk of every final record reached one broker or the other.
        var chunks: [String] = []
        for id in sessions {
            let record = try jsonObject(try await gateway.store.document(try DocumentPath("records/\(id)")))
            chunks += (record["gscope_data"] as? [String] ?? []).map { "realtime_data/\($0)" }
        }
        XCTAssertEqual(chunks.count, sessions.count * 5, "240 samples in chunks of 50")
        let all = Set(chunks)
        let complete = await onFirst.wait(timeout: 20) { messages in
            all.isSubset(of: Set(messages.map(\.topic) + onSecond.messages.map(\.topic)))
        }
        let seen = onFirst.messages.map(\.topic) + onSecond.messages.map(\.topic)
        XCTAssertTrue(complete, "chunks on neither broker: \(all.subtracting(seen).count) of \(all.count)")
        // Nothing twice beyond QoS 1: only what was in flight as the first broker went away.
        let counts = Dictionary(seen.filter { $0.hasPrefix("realtime_data/") }.map { ($0, 1) }, uniquingKeysWith: +)
        let repeated = counts.values.reduce(0) { $0 + $1 - 1 }
        XCTAssertLessThanOrEqual(repeated, 20, "chunks published more than once (the in-flight window is 20)")
        let status = await gateway.publisher.status
        XCTAssertEqual(status.failovers, 2, "there and back: \(status)")

        // Retained state: the first has every document as the store holds it; the second every
        // document of the sessions that closed while it was the one, and the gateway offline.
        let retained = try await gateway.store.retainedDocuments()
        let expected = Dictionary(retained.map { ($0.topic, $0.payload) }, uniquingKeysWith: { $1 })
        let firstHas = try await retainedMessages(port: first.port)
        for (topic, payload) in expected where topic.hasPrefix("records/") || topic.hasPrefix("TitanUpUsers/") {
            XCTAssertEqual(firstHas[topic].map { String(decoding: $0, as: UTF8.self) }, String(decoding: payload, as: UTF8.self),
                           "\(topic) on the first broker")
        }
        let secondHas = try await retainedMessages(port: second.port)
        for id in onSecondBeforeBack {
            let topic = "records/\(id)"
            XCTAssertEqual(secondHas[topic].map { String(decoding: $0, as: UTF8.self) }, expected[topic].map { String(decoding: $0, as: UTF8.self) },
                           "\(topic) on the second broker")
        }
        XCTAssertEqual(try jsonObject(firstHas["gyrogate/gw-test/status"])["state"] as? String, "online")
        XCTAssertEqual(try jsonObject(secondHas["gyrogate/gw-test/status"])["state"] as? String, "offline")

        await gateway.stop()
        onFirst.disconnect()
        onSecond.disconnect()
        first.stop()
        second.stop()
    }

    /// Only the second broker is up at start: the gateway publishes there, then moves to the first
    /// once it starts.
    func testAnUnreachableFirstBrokerIsSkippedAndReturnedTo() async throws {
        try requireBroker()
        let first = try MosquittoBroker(persistence: false), second = try MosquittoBroker(persistence: false)
        try second.start()
        let gateway = try Gateway(port: first.port) { configuration in
            configuration.fallbackBrokers = [BrokerEndpoint(host: "127.0.0.1", port: second.port)]
            configuration.failbackInterval = .milliseconds(500)
        }
        gateway.start()
        let id = try await gateway.session(device: "C4:BE:84:00:00:01", startMs: epochMs, samples: 60).id
        let drained = await gateway.waitForEmptyOutbox()
        XCTAssertTrue(drained, "published to the second broker")
        let onSecond = await gateway.publisher.status.broker
        XCTAssertEqual(onSecond, "127.0.0.1:\(second.port)")
        try first.start()
        let back = await eventually(timeout: 20) {
            let status = await gateway.publisher.status
            return status.state == .connected && status.broker == "127.0.0.1:\(first.port)"
        }
        XCTAssertTrue(back)
        // A broker that never had the documents gets them on arrival.
        let firstHas = try await retainedMessages(port: first.port)
        XCTAssertNotNil(firstHas["records/\(id)"], "the record re-asserted on the first broker")
        await gateway.stop()
        first.stop()
        second.stop()
    }
}

/// Closed records among `messages` (a record with its end `timestamp`), by topic.
private func closedRecords(_ messages: [TestSubscriber.Message]) -> [String] {
    messages.filter { $0.topic.hasPrefix("records/") && ((try? jsonObject($0.payload))?["timestamp"] is NSNumber) }.map(\.topic)
}

/// What a new subscriber gets as retained on the broker at `port`, by topic.
private func retainedMessages(port: Int) async throws -> [String: [UInt8]] {
    let subscriber = TestSubscriber()
    try await subscriber.connect(port: port, topics: ["records/+", "TitanUpUsers/#", "gyrogate/+/status"])
    defer { subscriber.disconnect() }
    guard await subscriber.sync() else { throw XCTSkip("no marker back from the broker on \(port)") }
    return Dictionary(subscriber.messages.filter(\.retained).map { ($0.topic, $0.payload) }, uniquingKeysWith: { $1 })
}
