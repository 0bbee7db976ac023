import Foundation
import MQTTPublisher
import TestSupport
import XCTest

final class RetainedRecordsTests: XCTestCase {
    /// Acceptance 1: a late subscriber gets the three recorded sessions as retained records,
    /// then the fourth live.
    func testLateSubscriberGetsThreeRetainedRecordsThenTheFourthLive() async throws {
        try requireBroker()
        let broker = try MosquittoBroker()
        try broker.start()
        let gateway = try Gateway(port: broker.port)
        gateway.start()
        var ids: [String] = []
        for n in 0..<3 {
            ids.append(try await gateway.session(device: "C4:BE:84:00:00:0\(n)", startMs: epochMs + Double(n) * 60_000, samples: 120).id)
        }
        let drained = await gateway.waitForEmptyOutbox()
        XCTAssertTrue(drained)

        let subscriber = TestSubscriber()
        try await subscriber.connect(port: broker.port, topics: ["records/+"])
        let gotRetained = await subscriber.wait(timeout: 5) { $0.count >= 3 }
        XCTAssertTrue(gotRetained)
        // Whatever else the broker held for this subscription has arrived once a marker sent after it has.
        let synced = await subscriber.sync()
        XCTAssertTrue(synced)
        let retained = subscriber.messages
        XCTAssertEqual(retained.count, 3)
        XCTAssertTrue(retained.allSatisfy(\.retained))
        XCTAssertEqual(Set(retained.map(\.topic)), Set(ids.map { "records/\($0)" }))
        for message in retained {
            let record = try jsonObject(message.payload)
            XCTAssertEqual(record["samples"] as? Int, 120)
            XCTAssertNotNil(record["timestamp"] as? Double ?? (record["timestamp"] as? Int).map(Double.init), "closed record")
        }

        let fourth = try await gateway.session(device: "C4:BE:84:00:00:09", startMs: epochMs + 600_000, samples: 80).id
        let gotLive = await subscriber.wait(timeout: 10) { messages in
            messages.dropFirst(3).contains { (try? jsonObject($0.payload))?["samples"] as? Int == 80 }
        }
        XCTAssertTrue(gotLive)
        let live = subscriber.messages.dropFirst(3)
        XCTAssertTrue(live.allSatisfy { $0.topic == "records/\(fourth)" && !$0.retained })
        await gateway.stop()
        broker.stop()
    }
}

final class MessagePropertiesTests: XCTestCase {
    /// v5 properties as a v5 subscriber (`mosquitto_sub -V 5`) sees them.
    func testDocumentsCarryContentTypeFormatUserPropertiesAndExpiry() async throws {
        try requireBroker()
        let sub = ["/usr/bin/mosquitto_sub", "/usr/local/bin/mosquitto_sub"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let sub else { throw XCTSkip("mosquitto_sub is not installed (mosquitto-clients)") }
        let broker = try MosquittoBroker()
        try broker.start()
        let gateway = try Gateway(port: broker.port) { $0.messageExpirySeconds = 600 }
        gateway.start()
        let session = try await gateway.session(device: "C4:BE:84:00:00:01", startMs: epochMs, samples: 10)
        let drained = await gateway.waitForEmptyOutbox()
        XCTAssertTrue(drained)
        let output = gateway.directory.file("sub.txt")
        let child = try ChildProcess(sub, ["-p", "\(broker.port)", "-V", "5", "-t", "records/+", "-C", "1", "-W", "10",
                                           "-F", "%C|%F|%E|%P|%t"], outputFile: output)
        XCTAssertEqual(child.wait(timeout: 15), 0)
        let line = try String(contentsOfFile: output, encoding: .utf8)
        XCTAssertTrue(line.hasPrefix("application/json|1|"), line)
        XCTAssertTrue(line.contains("gateway:gw-test"), line)
        XCTAssertTrue(line.contains("path:records/\(session.id)"), line)
        XCTAssertTrue(line.hasSuffix("|records/\(session.id)\n"), line)
        let expiry = Int(line.split(separator: "|")[2]) ?? 0
        XCTAssertTrue((1...600).contains(expiry), line)
        await gateway.stop()
        broker.stop()
    }
}
