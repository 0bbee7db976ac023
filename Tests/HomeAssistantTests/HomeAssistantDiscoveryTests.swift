import Capture
import Daemon
import Foundation
import GatewayConfig
import GyroStore
import Logging
import MQTTPublisher
import Sensors
import TestSupport
import XCTest

/// Home Assistant discovery against a real mosquitto: the retained documents, the state their
/// templates read, and the clean-up of entities the configuration no longer has.
final class HomeAssistantDiscoveryTests: XCTestCase {
    static let gatewayId = "gw.ha-1"
    static let node = "gyrogate_gw_ha-1"
    static let sensorA = "C4:BE:84:00:00:01"
    static let sensorB = "C4:BE:84:00:00:02"
    static let statusTopic = "site/gyrogate/gw.ha-1/status"
    static let stateTopic = "site/gyrogate/gw.ha-1/state"

    /// The objects each device has, by component.
    static let gatewayObjects = ["binary_sensor/connectivity", "sensor/outbox_depth", "sensor/store_used", "sensor/samples_per_second"]
    static let sensorObjects = ["sensor/state", "sensor/battery", "sensor/samples_received", "sensor/gaps", "binary_sensor/session_open"]

    static func configTopics(gateway: Bool = true, sensors: [String]) -> Set<String> {
        var topics: Set<String> = []
        func add(_ node: String, _ object: String) {
            let parts = object.split(separator: "/")
            topics.insert("homeassistant/\(parts[0])/\(node)/\(parts[1])/config")
        }
        if gateway { for object in gatewayObjects { add(node, object) } }
        for sensor in sensors {
            let node = node + "_" + sensor.replacingOccurrences(of: ":", with: "").lowercased()
            for object in sensorObjects { add(node, object) }
        }
        return topics
    }

    // MARK: - Harness

    /// The parts of a gateway discovery needs (no Bluetooth): store, capture, the sensor fleet
    /// (never run: its sensors read as stopped), the publisher and the service.
    final class Gateway: @unchecked Sendable {
        let store: GyroStore
        let engine: CaptureEngine
        let publisher: MQTTPublisher
        let service: HomeAssistantService
        var tasks: [Task<Void, Never>] = []

        init(_ configuration: GatewayConfiguration, statePeriod: Duration = .seconds(60)) throws {
            store = try GyroStore.open(directory: configuration.dataDirectory, logger: testLogger())
            var publisherConfiguration = PublisherConfiguration(configuration)
            publisherConfiguration.reconnectMinimum = .milliseconds(100)
            publisherConfiguration.reconnectMaximum = .milliseconds(500)
            let publisher = MQTTPublisher(store: store, configuration: publisherConfiguration, logger: testLogger("gyrogate.mqtt"))
            self.publisher = publisher
            engine = CaptureEngine(store: store, rules: CaptureRules(configuration), calendar: PeriodCalendar(configuration),
                                   logger: testLogger(), onCommit: { publisher.outboxChanged() })
            let fleet = SensorFleet(configuration, engine: engine, logger: testLogger())
            service = HomeAssistantService(configuration: configuration, publisher: publisher, store: store, capture: engine, sensors: fleet,
                                           logger: testLogger("gyrogate.ha"), tick: .milliseconds(100), statePeriod: statePeriod)
        }

        func start() {
            let publisher = self.publisher, service = self.service
            tasks.append(Task { await publisher.run() })
            tasks.append(Task { try? await service.run() })
        }

        func stop() async {
            tasks[1].cancel()
            await tasks[1].value
            publisher.shutdown()
            await tasks[0].value
            tasks = []
        }
    }

    var broker: MosquittoBroker!
    var data: TemporaryDirectory!

    override func setUp() async throws {
        if MosquittoBroker.executable == nil {
            if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail("mosquitto is not installed") }
            throw XCTSkip("mosquitto is not installed (bash Tests/run-tests.sh installs it)")
        }
        broker = try MosquittoBroker()
        try broker.start()
        data = try TemporaryDirectory("ha-gateway")
    }

    override func tearDown() async throws {
        broker?.stop()
    }

    func configuration(sensors: [String], enabled: Bool = true) throws -> GatewayConfiguration {
        let object: [String: Any] = [
            "gatewayId": Self.gatewayId,
            "dataDirectory": data.path,
            "bluetooth": ["transport": "tcp:127.0.0.1:1"],
            "sensors": sensors.enumerated().map { ["address": $0.element, "userId": "user\($0.offset)", "name": "Board \($0.offset)"] },
            "mqtt": ["host": "127.0.0.1", "port": broker.port, "topicPrefix": "site/", "clientId": "gyrogate-ha-test"],
            "homeAssistant": ["enabled": enabled],
        ]
        return try GatewayConfiguration.parse(try JSONSerialization.data(withJSONObject: object), baseDirectory: data.path)
    }

    func subscriber(_ topics: [String] = ["homeassistant/#", "site/gyrogate/#"]) async throws -> TestSubscriber {
        let subscriber = TestSubscriber()
        try await subscriber.connect(port: broker.port, topics: topics)
        return subscriber
    }

    /// The newest message per topic.
    func latest(_ messages: [TestSubscriber.Message]) -> [String: TestSubscriber.Message] {
        var result: [String: TestSubscriber.Message] = [:]
        for message in messages { result[message.topic] = message }
        return result
    }

    func object(_ message: TestSubscriber.Message?, file: StaticString = #filePath, line: UInt = #line) -> [String: Any] {
        guard let message else {
            XCTFail("no message", file: file, line: line)
            return [:]
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any] else {
            XCTFail("\(message.topic): not a JSON object: \(message.text)", file: file, line: line)
            return [:]
        }
        return object
    }

    /// What Home Assistant's template `{{ … value_json.a['b'].c … }}` reads from `document`:
    /// the first `value_json` path in it, resolved (JSON null is `NSNull`); nil when a key is missing.
    static func templateValue(_ template: String, in document: Any) -> Any? {
        guard let range = template.range(of: #"value_json((\.[A-Za-z_][A-Za-z0-9_]*)|(\['[^']*'\]))+"#, options: .regularExpression) else {
            return nil
        }
        var path = String(template[range].dropFirst("value_json".count))
        var current: Any = document
        while !path.isEmpty {
            let key: String
            if path.hasPrefix(".") {
                let end = path.dropFirst().firstIndex { $0 == "." || $0 == "[" } ?? path.endIndex
                key = String(path[path.index(after: path.startIndex)..<end])
                path = String(path[end...])
            } else {
                let end = path.range(of: "']")!
                key = String(path[path.index(path.startIndex, offsetBy: 2)..<end.lowerBound])
                path = String(path[end.upperBound...])
            }
            guard let object = current as? [String: Any], let next = object[key] else { return nil }
            current = next
        }
        return current
    }

    // MARK: - Tests

    func testDiscoveryDocumentsStateAndARemovedSensor() async throws {
        let watcher = try await subscriber()
        var gateway: Gateway? = try Gateway(try configuration(sensors: [Self.sensorA, Self.sensorB]))
        let first = gateway!
        first.start()

        // Every discovery document, retained by the broker: a subscriber that comes later gets them.
        let expected = Self.configTopics(sensors: [Self.sensorA, Self.sensorB])
        XCTAssertEqual(expected.count, 14)
        let published = await watcher.wait(timeout: 15) { messages in
            expected.isSubset(of: Set(messages.filter { !$0.payload.isEmpty }.map(\.topic)))
                && messages.contains { $0.topic == Self.stateTopic }
        }
        XCTAssertTrue(published, "discovery documents and the state: \(watcher.messages.map(\.topic))")
        let late = try await subscriber()
        let retained = await late.wait(timeout: 10) { messages in
            expected.isSubset(of: Set(messages.filter { $0.retained && !$0.payload.isEmpty }.map(\.topic)))
                && messages.contains { $0.topic == Self.stateTopic && $0.retained }
                && messages.contains { $0.topic == Self.statusTopic && $0.retained }
        }
        XCTAssertTrue(retained, "retained: \(late.messages.map { "\($0.topic) retained=\($0.retained)" })")
        let messages = latest(late.messages)
        XCTAssertEqual(Set(messages.keys.filter { $0.hasPrefix("homeassistant/") }), expected, "no other discovery topics")

        let state = object(messages[Self.stateTopic])
        let status = object(messages[Self.statusTopic])
        XCTAssertEqual(status["state"] as? String, "online")
        var uniqueIds: Set<String> = []
        for topic in expected.sorted() {
            let document = object(messages[topic])
            let parts = topic.split(separator: "/").map(String.init)
            XCTAssertEqual(parts.count, 5, topic)
            XCTAssertTrue(["sensor", "binary_sensor"].contains(parts[1]), topic)
            for id in [parts[2], parts[3]] {
                XCTAssertNotNil(id.range(of: "^[A-Za-z0-9_-]+$", options: .regularExpression), "node_id / object_id \(id)")
            }
            // The schema's keys.
            XCTAssertFalse((document["name"] as? String ?? "").isEmpty, "\(topic): name")
            let uniqueId = try XCTUnwrap(document["unique_id"] as? String, "\(topic): unique_id")
            XCTAssertTrue(uniqueIds.insert(uniqueId).inserted, "\(topic): unique_id \(uniqueId) is used twice")
            let stateTopic = try XCTUnwrap(document["state_topic"] as? String, "\(topic): state_topic")
            let device = try XCTUnwrap(document["device"] as? [String: Any], "\(topic): device")
            let identifiers = try XCTUnwrap(device["identifiers"] as? [String], "\(topic): device.identifiers")
            XCTAssertFalse(identifiers.isEmpty)
            for key in ["name", "manufacturer", "model"] { XCTAssertNotNil(device[key] as? String, "\(topic): device.\(key)") }
            let template = try XCTUnwrap(document["value_template"] as? String, "\(topic): value_template (the state is JSON)")
            if parts[2] == Self.node {
                XCTAssertEqual(identifiers, [Self.node])
                XCTAssertNil(device["via_device"])
            } else {
                XCTAssertEqual(identifiers, [parts[2]])
                XCTAssertEqual(device["via_device"] as? String, Self.node, "\(topic): via_device names the gateway")
            }
            if parts[3] == "connectivity" {
                // Reads the presence topic itself: "online", or the last will's "offline".
                XCTAssertEqual(stateTopic, Self.statusTopic)
                XCTAssertEqual(document["device_class"] as? String, "connectivity")
                XCTAssertEqual(Self.templateValue(template, in: status) as? String, "online")
                XCTAssertNil(document["availability_topic"])
                continue
            }
            XCTAssertEqual(stateTopic, Self.stateTopic, topic)
            XCTAssertEqual(document["availability_topic"] as? String, Self.statusTopic, "\(topic): availability")
            XCTAssertEqual(document["availability_template"] as? String, "{{ value_json.state }}")
            XCTAssertEqual(document["payload_available"] as? String, "online")
            XCTAssertEqual(document["payload_not_available"] as? String, "offline")
            XCTAssertEqual(Self.templateValue("{{ value_json.state }}", in: status) as? String, "online")
            // The template finds its value in the state document.
            let value = try XCTUnwrap(Self.templateValue(template, in: state), "\(topic): \(template) reads nothing from \(state)")
            switch parts[3] {
            case "state":
                XCTAssertEqual(document["device_class"] as? String, "enum")
                let options = try XCTUnwrap(document["options"] as? [String])
                XCTAssertTrue(options.contains(value as? String ?? "?"), "\(topic): \(String(describing: value)) is one of \(options)")
            case "battery":
                XCTAssertEqual(document["unit_of_measurement"] as? String, "%")
                XCTAssertEqual(document["device_class"] as? String, "battery")
                XCTAssertTrue(value is NSNull, "no battery read yet: null, i.e. unknown")
            case "session_open":
                XCTAssertNotNil(value as? Bool, "\(topic): \(String(describing: value))")
            default:
                XCTAssertNotNil(value as? Double, "\(topic): \(String(describing: value)) is a number")
            }
        }
        let sensors = try XCTUnwrap(state["sensors"] as? [String: [String: Any]])
        XCTAssertEqual(Set(sensors.keys), [Self.sensorA, Self.sensorB])
        XCTAssertEqual(sensors[Self.sensorA]?["state"] as? String, "stopped", "no Bluetooth controller in this test")
        XCTAssertEqual(sensors[Self.sensorA]?["session_open"] as? Bool, false)

        // A change is published at once (the period is a minute here).
        late.disconnect()
        _ = try await first.engine.startSession(sensor: SensorIdentity(device: Self.sensorA, userId: "user0"), atMs: Date().timeIntervalSince1970 * 1000)
        let changed = await watcher.wait(timeout: 5) { messages in
            guard let message = messages.last(where: { $0.topic == Self.stateTopic }),
                  let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any],
                  let sensors = object["sensors"] as? [String: [String: Any]] else { return false }
            return sensors[Self.sensorA]?["session_open"] as? Bool == true && sensors[Self.sensorB]?["session_open"] as? Bool == false
        }
        XCTAssertTrue(changed, "the state follows a session opening")
        await first.stop()
        gateway = nil

        // Restart with sensor B removed: its entities are cleared, A's and the gateway's stay.
        let removed = Self.configTopics(gateway: false, sensors: [Self.sensorB])
        let kept = Self.configTopics(sensors: [Self.sensorA])
        let ledger = data.file(HomeAssistantService.ledgerFileName)
        XCTAssertTrue(try String(contentsOfFile: ledger, encoding: .utf8).contains("c4be84000002"), "the first run listed B's topics")
        let clearing = try await subscriber(["homeassistant/#"])
        let second = try Gateway(try configuration(sensors: [Self.sensorA]))
        second.start()
        let cleared = await clearing.wait(timeout: 15) { messages in
            removed.isSubset(of: Set(messages.filter { $0.payload.isEmpty }.map(\.topic)))
        }
        XCTAssertTrue(cleared, "zero-byte publishes: \(clearing.messages.filter { $0.payload.isEmpty }.map(\.topic))")
        XCTAssertFalse(clearing.messages.contains { $0.payload.isEmpty && kept.contains($0.topic) }, "nothing configured is cleared")
        let fresh = try await subscriber(["homeassistant/#"])
        let settled = await fresh.wait(timeout: 10) { messages in kept.isSubset(of: Set(messages.map(\.topic))) }
        XCTAssertTrue(settled)
        // Every retained message of the subscription has arrived once a marker sent after them has.
        let synced = await fresh.sync()
        XCTAssertTrue(synced)
        XCTAssertEqual(Set(fresh.messages.filter(\.retained).map(\.topic)), kept, "retained configs after the restart")
        // The list no longer has B's topics once the broker acknowledged their clearing.
        let forgotten = await eventually(timeout: 5) {
            (try? String(contentsOfFile: ledger, encoding: .utf8))?.contains("c4be84000002") == false
        }
        XCTAssertTrue(forgotten, "ledger: \((try? String(contentsOfFile: ledger, encoding: .utf8)) ?? "")")
        await second.stop()

        // The entities go unavailable with the gateway: its presence says offline.
        let after = try await subscriber([Self.statusTopic])
        let offline = await after.wait(timeout: 5) { $0.last.map { $0.text.contains("offline") } ?? false }
        XCTAssertTrue(offline)
    }

    func testTurningDiscoveryOffRemovesEveryEntityAndTheState() async throws {
        let first = try Gateway(try configuration(sensors: [Self.sensorA]))
        first.start()
        let all = Self.configTopics(sensors: [Self.sensorA])
        let watcher = try await subscriber()
        let published = await watcher.wait(timeout: 15) { messages in
            all.isSubset(of: Set(messages.map(\.topic))) && messages.contains { $0.topic == Self.stateTopic }
        }
        XCTAssertTrue(published)
        await first.stop()

        let configuration = try configuration(sensors: [Self.sensorA], enabled: false)
        XCTAssertTrue(HomeAssistantService.isNeeded(configuration), "the earlier run left entities to remove")
        let second = try Gateway(configuration)
        second.start()
        let cleared = await watcher.wait(timeout: 15) { messages in
            all.union([Self.stateTopic]).isSubset(of: Set(messages.filter { $0.payload.isEmpty }.map(\.topic)))
        }
        XCTAssertTrue(cleared, "cleared: \(watcher.messages.filter { $0.payload.isEmpty }.map(\.topic))")
        let ledger = data.file(HomeAssistantService.ledgerFileName)
        let removed = await eventually(timeout: 5) { !FileManager.default.fileExists(atPath: ledger) }
        XCTAssertTrue(removed, "nothing left to clear: the list is removed")
        XCTAssertFalse(HomeAssistantService.isNeeded(configuration))
        let fresh = try await subscriber()
        _ = await fresh.wait(timeout: 2) { $0.contains { $0.topic == Self.statusTopic } }
        let synced = await fresh.sync()
        XCTAssertTrue(synced)
        XCTAssertEqual(fresh.messages.filter(\.retained).map(\.topic), [Self.statusTopic], "only the presence document is retained")
        await second.stop()
    }
}
