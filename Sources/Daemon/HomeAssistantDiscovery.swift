import GatewayConfig
import JSON
import MQTTPublisher
import Sensors
import TextTools

/// Home Assistant MQTT discovery documents for the gateway and its configured sensors, and the
/// state document their templates read (https://www.home-assistant.io/integrations/mqtt/).
///
/// Topic layout (`dp`: `homeAssistant.discoveryPrefix`; `gid`: the gateway id with every
/// character outside `[A-Za-z0-9_-]` replaced by `_`; `addr`: the sensor's address as 12
/// lower-case hex digits):
///
/// ```
/// dp/binary_sensor/gyrogate_gid/connectivity/config       broker connection (reads the presence topic)
/// dp/sensor/gyrogate_gid/{outbox_depth,store_used,samples_per_second}/config
/// dp/sensor/gyrogate_gid_addr/{state,battery,samples_received,gaps}/config
/// dp/binary_sensor/gyrogate_gid_addr/session_open/config
/// {mqtt.topicPrefix}gyrogate/{gatewayId}/state             retained JSON state, every 10 s and on change
/// ```
///
/// Every entity but connectivity is available while the presence topic
/// (`{mqtt.topicPrefix}gyrogate/{gatewayId}/status`, last will "offline") says "online".
/// Connectivity reads that topic itself, so a gateway that lost the broker shows as
/// disconnected rather than unavailable.
public struct HomeAssistantDiscovery: Sendable {
    public let configuration: GatewayConfiguration
    public let version: String
    /// Where the presence document is (availability) and the state document is published.
    public let statusTopic: String
    public let stateTopic: String

    public init(configuration: GatewayConfiguration, version: String = gyrogateVersion) {
        self.configuration = configuration
        self.version = version
        let publisher = PublisherConfiguration(configuration, version: version)
        statusTopic = publisher.statusTopic
        stateTopic = publisher.topicPrefix + "gyrogate/\(configuration.gatewayId)/state"
    }

    var prefix: String { configuration.homeAssistant.discoveryPrefix }
    var gatewayNode: String { "gyrogate_" + Self.sanitized(configuration.gatewayId) }

    /// `node_id` and `object_id` may only hold `[A-Za-z0-9_-]`.
    static func sanitized(_ text: String) -> String {
        String(text.unicodeScalars.map { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-") ? Character(scalar) : "_"
        })
    }

    /// `C4:BE:84:00:00:01` → `c4be84000001`.
    static func addressKey(_ address: String) -> String { sanitized(address.replacingEvery(":", with: "").lowercased()) }

    func sensorNode(_ address: String) -> String { gatewayNode + "_" + Self.addressKey(address) }

    /// Every discovery document by its config topic, as JSON. `sensors` supplies the model and
    /// firmware of the boards that have been initialised (the documents change when they are
    /// learnt, and are then published again).
    public func documents(sensors: [SensorStatus] = []) -> [String: [UInt8]] {
        var documents: [String: [UInt8]] = [:]
        for entity in entities(sensors: sensors) {
            documents[entity.topic] = Self.json(entity.payload)
        }
        return documents
    }

    struct Entity {
        var topic: String
        var payload: [String: JSONValue]
    }

    func entities(sensors: [SensorStatus]) -> [Entity] {
        var result: [Entity] = []
        let availability: [String: JSONValue] = [
            "availability_topic": .string(statusTopic), "availability_template": "{{ value_json.state }}",
            "payload_available": "online", "payload_not_available": "offline",
        ]
        let origin: JSONValue = ["name": "gyrogate", "sw_version": .string(version)]
        let gatewayDevice: JSONValue = [
            "identifiers": [.string(gatewayNode)], "name": .string("gyrogate \(configuration.gatewayId)"), "manufacturer": "gyrogate",
            "model": "gyrogate gateway", "sw_version": .string(version),
        ]

        func add(_ component: String, node: String, object: String, device: JSONValue, available: Bool = true, _ fields: [String: JSONValue]) {
            var payload = fields
            payload["unique_id"] = .string(node + "_" + object)
            payload["device"] = device
            payload["origin"] = origin
            if payload["state_topic"] == nil { payload["state_topic"] = .string(stateTopic) }
            if available { payload.merge(availability) { own, _ in own } }
            result.append(Entity(topic: "\(prefix)/\(component)/\(node)/\(object)/config", payload: payload))
        }

        add("binary_sensor", node: gatewayNode, object: "connectivity", device: gatewayDevice, available: false, [
            "name": "Broker connection", "device_class": "connectivity", "entity_category": "diagnostic",
            "state_topic": .string(statusTopic), "value_template": "{{ 'ON' if value_json.state == 'online' else 'OFF' }}",
            "payload_on": "ON", "payload_off": "OFF",
        ])
        add("sensor", node: gatewayNode, object: "outbox_depth", device: gatewayDevice, [
            "name": "Outbox depth", "value_template": "{{ value_json.outbox_depth }}", "unit_of_measurement": "messages",
            "state_class": "measurement", "icon": "mdi:tray-full", "entity_category": "diagnostic",
        ])
        add("sensor", node: gatewayNode, object: "store_used", device: gatewayDevice, [
            "name": "Store use", "value_template": "{{ value_json.store_used_percent }}", "unit_of_measurement": "%",
            "state_class": "measurement", "suggested_display_precision": 1, "icon": "mdi:database", "entity_category": "diagnostic",
        ])
        add("sensor", node: gatewayNode, object: "samples_per_second", device: gatewayDevice, [
            "name": "Samples per second", "value_template": "{{ value_json.samples_per_second }}", "unit_of_measurement": "samples/s",
            "state_class": "measurement", "suggested_display_precision": 1, "icon": "mdi:chart-line",
        ])

        for sensor in configuration.sensors {
            let node = sensorNode(sensor.address)
            let status = sensors.first { $0.address.uppercased() == sensor.address.uppercased() }
            var device: [String: JSONValue] = [
                "identifiers": [.string(node)], "name": .string(sensor.name), "manufacturer": "MbientLab",
                "model": .string(status?.model ?? "MetaWear"), "serial_number": .string(sensor.address), "via_device": .string(gatewayNode),
            ]
            if let firmware = status?.firmware { device["sw_version"] = .string(firmware) }
            // The address is six hex pairs (validated), safe inside a quoted template key.
            let value = "value_json.sensors['\(sensor.address)']"
            add("sensor", node: node, object: "state", device: .object(device), [
                "name": "State", "value_template": .string("{{ \(value).state }}"), "device_class": "enum",
                "options": SensorState.allCases.map(\.rawValue).jsonValue, "icon": "mdi:bluetooth-connect",
            ])
            add("sensor", node: node, object: "battery", device: .object(device), [
                "name": "Battery", "value_template": .string("{{ \(value).battery }}"), "device_class": "battery",
                "unit_of_measurement": "%", "state_class": "measurement", "entity_category": "diagnostic",
            ])
            add("sensor", node: node, object: "samples_received", device: .object(device), [
                "name": "Samples received", "value_template": .string("{{ \(value).samples_received }}"), "unit_of_measurement": "samples",
                "state_class": "total_increasing", "icon": "mdi:counter",
            ])
            add("sensor", node: node, object: "gaps", device: .object(device), [
                "name": "Gaps", "value_template": .string("{{ \(value).gaps }}"), "state_class": "total_increasing", "icon": "mdi:timeline-alert",
            ])
            add("binary_sensor", node: node, object: "session_open", device: .object(device), [
                "name": "Session", "device_class": "running", "value_template": .string("{{ 'ON' if \(value).session_open else 'OFF' }}"),
                "payload_on": "ON", "payload_off": "OFF",
            ])
        }
        return result
    }

    /// What the state document is made of; gathered by ``HomeAssistantService``.
    public struct Snapshot: Sendable {
        public var outboxDepth: Int
        public var storeUsedBytes: Int
        public var storeMaxBytes: Int
        /// Committed samples per second since the previous snapshot; nil when not known.
        public var samplesPerSecond: Double?
        public var sensors: [SensorStatus]
        /// Addresses (upper case) with an open session.
        public var openSessions: Set<String>

        public init(outboxDepth: Int, storeUsedBytes: Int, storeMaxBytes: Int, samplesPerSecond: Double?,
                    sensors: [SensorStatus], openSessions: Set<String>) {
            self.outboxDepth = outboxDepth
            self.storeUsedBytes = storeUsedBytes
            self.storeMaxBytes = storeMaxBytes
            self.samplesPerSecond = samplesPerSecond
            self.sensors = sensors
            self.openSessions = openSessions
        }
    }

    /// The state document: one JSON object, sensors by address. A configured sensor whose
    /// supervisor is not running (no controller yet) is `stopped`; unknown values are null,
    /// which Home Assistant's templates render as "None", i.e. unknown.
    public func state(_ snapshot: Snapshot) -> [UInt8] {
        var sensors: [String: JSONValue] = [:]
        for sensor in configuration.sensors {
            let status = snapshot.sensors.first { $0.address.uppercased() == sensor.address.uppercased() }
            sensors[sensor.address] = [
                "name": .string(sensor.name),
                "state": .string((status?.state ?? .stopped).rawValue),
                "battery": (status?.batteryPercent).jsonValue,
                "samples_received": (status?.samplesReceived ?? 0).jsonValue,
                "gaps": (status?.gaps ?? 0).jsonValue,
                "session_open": .bool(snapshot.openSessions.contains(sensor.address.uppercased())),
            ]
        }
        let percent = snapshot.storeMaxBytes > 0 ? (Double(snapshot.storeUsedBytes) * 1000 / Double(snapshot.storeMaxBytes)).rounded() / 10 : 0
        return Self.json([
            "outbox_depth": snapshot.outboxDepth.jsonValue,
            "store_used_bytes": snapshot.storeUsedBytes.jsonValue,
            "store_max_bytes": snapshot.storeMaxBytes.jsonValue,
            "store_used_percent": .number(percent),
            "samples_per_second": snapshot.samplesPerSecond.map { ($0 * 10).rounded() / 10 }.jsonValue,
            "sensors": .object(sensors),
        ])
    }

    /// Sorted keys: the same document gives the same bytes, so a change is seen by comparing them.
    static func json(_ object: [String: JSONValue]) -> [UInt8] {
        JSONValue.object(object).encoded([.sortedKeys, .withoutEscapingSlashes])
    }
}
