import Capture
import Foundation
import GyroStore
import MQTTPublisher
import TestSupport
import XCTest

final class BrokerOutageTests: XCTestCase {
    /// Acceptance 2: the broker is down for the middle third of a run while sessions and chunks
    /// keep coming; a persistent QoS 1 subscriber still gets every chunk and record, per device
    /// in order.
    func testPersistentSubscriberGetsEverythingAcrossABrokerOutage() async throws {
        try requireBroker()
        let broker = try MosquittoBroker(persistence: true)
        try broker.start()
        let subscriber = TestSubscriber(clientId: "outage-subscriber", cleanSession: false)
        try await subscriber.connect(port: broker.port, topics: ["realtime_data/+", "records/+"])
        let gateway = try Gateway(port: broker.port, chunkSize: 50)
        gateway.start()

        let devices = ["C4:BE:84:00:00:01", "C4:BE:84:00:00:02"]
        var sessions: [String] = []
        for third in 0..<3 {
            if third == 1 { broker.stop() }
            if third == 2 { try broker.start() }
            for (d, device) in devices.enumerated() {
                let start = epochMs + Double(third * 10 + d) * 60_000
                let sensor = SensorIdentity(device: device, userId: "u\(d)")
                sessions.append(try await gateway.engine.startSession(sensor: sensor, atMs: start).id)
                for batch in 0..<6 { try await gateway.feed(sensor: sensor, startMs: start, from: Int64(batch * 40), count: 40) }
                _ = try await gateway.engine.stopSession(device: device)
            }
            if third == 0 {
                // The first third reaches the subscriber before the outage: its closed records arrive.
                let first = Set(sessions.map { "records/\($0)" })
                let delivered = await subscriber.wait(timeout: 20) { messages in
                    first.isSubset(of: Set(messages.filter { ((try? jsonObject($0.payload))?["timestamp"] is NSNumber) }.map(\.topic)))
                }
                XCTAssertTrue(delivered, "the first third before the outage")
            }
            // The middle third is committed while the broker is down (stop() waited for its exit);
            // the last after start() saw it running again.
        }
        let drained = await gateway.waitForEmptyOutbox(timeout: 30)
        XCTAssertTrue(drained)

        // Every chunk of every session's final record, and every final record.
        var expectedChunks: [String: [String]] = [:]
        for id in sessions {
            let record = try jsonObject(try await gateway.store.document(try DocumentPath("records/\(id)")))
            expectedChunks[id] = record["gscope_data"] as? [String] ?? []
            XCTAssertEqual(expectedChunks[id]?.count, 5, "240 samples in chunks of 50")
        }
        let allChunks = Set(expectedChunks.values.joined().map { "realtime_data/\($0)" })
        let complete = await subscriber.wait(timeout: 20) { messages in
            let topics = Set(messages.map(\.topic))
            let closedRecords = messages.filter { $0.topic.hasPrefix("records/") && ((try? jsonObject($0.payload))?["timestamp"] is NSNumber) }
            return allChunks.isSubset(of: topics) && Set(closedRecords.map(\.topic)).count == sessions.count
        }
        XCTAssertTrue(complete, "missing chunks: \(allChunks.subtracting(subscriber.messages.map(\.topic)).count)")

        // Per device, first deliveries of chunks are in capture order (record, then seq).
        var firstSeen: [String: [(record: String, seq: Int)]] = [:]
        var seen = Set<String>()
        for message in subscriber.messages where message.topic.hasPrefix("realtime_data/") && seen.insert(message.topic).inserted {
            let chunk = try jsonObject(message.payload)
            firstSeen[chunk["device"] as? String ?? "", default: []].append((chunk["record"] as? String ?? "", chunk["seq"] as? Int ?? -1))
        }
        for (device, chunks) in firstSeen {
            let order = sessions.filter { id in chunks.contains { $0.record == id } }
            let expected = order.flatMap { id in (0..<5).map { (id, $0) } }
            XCTAssertEqual(chunks.map { "\($0.record)#\($0.seq)" }, expected.map { "\($0.0)#\($0.1)" }, device)
        }
        let status = await gateway.publisher.status
        XCTAssertGreaterThanOrEqual(status.connections, 2)
        await gateway.stop()
        subscriber.disconnect()
        broker.stop()
    }

    /// Acceptance 3: a broker restarted without persistence lost the retained documents; the
    /// gateway's new session re-asserts them.
    func testRetainedDocumentsAreBackAfterABrokerRestartWithoutPersistence() async throws {
        try requireBroker()
        let broker = try MosquittoBroker(persistence: false)
        try broker.start()
        let gateway = try Gateway(port: broker.port)
        gateway.start()
        var ids: [String] = []
        for n in 0..<3 { ids.append(try await gateway.session(device: "C4:BE:84:00:00:0\(n)", startMs: epochMs + Double(n) * 60_000, samples: 60).id) }
        let drained = await gateway.waitForEmptyOutbox()
        XCTAssertTrue(drained)

        broker.stop()
        try broker.start()
        let resynced = await eventually(timeout: 10) {
            let status = await gateway.publisher.status
            return status.resyncs >= 2 && status.state == .connected
        }
        XCTAssertTrue(resynced)
        // A fresh subscriber sees them as retained messages (retry: the resync may still be going on).
        let expected = Set(ids.map { "records/\($0)" } + ["gyrogate/gw-test/status"])
        var subscriber = TestSubscriber()
        var back = false
        for _ in 0..<20 where !back {
            subscriber = TestSubscriber()
            try await subscriber.connect(port: broker.port, topics: ["records/+", "gyrogate/+/status"])
            back = await subscriber.wait(timeout: 0.5) { Set($0.filter(\.retained).map(\.topic)).isSuperset(of: expected) }
            if !back { subscriber.disconnect() }
        }
        XCTAssertTrue(back, "got \(subscriber.messages.map(\.topic))")
        let presence = try jsonObject(subscriber.messages.first { $0.topic == "gyrogate/gw-test/status" }?.payload)
        XCTAssertEqual(presence["state"] as? String, "online")
        await gateway.stop()
        broker.stop()
    }

    /// The will is not sent on a clean stop, so "offline" is published before disconnecting.
    func testCleanShutdownPublishesOfflineStatus() async throws {
        try requireBroker()
        let broker = try MosquittoBroker()
        try broker.start()
        let gateway = try Gateway(port: broker.port)
        gateway.start()
        let subscriber = TestSubscriber()
        try await subscriber.connect(port: broker.port, topics: ["gyrogate/gw-test/status"])
        let online = await subscriber.wait(timeout: 10) { $0.contains { $0.text.contains("online") } }
        XCTAssertTrue(online)
        await gateway.stop()
        let offline = await subscriber.wait(timeout: 10) { $0.last?.text == #"{"state":"offline"}"# }
        XCTAssertTrue(offline)
        broker.stop()
    }
}
