import Capture
import FoundationEssentials
import GatewayConfig
import GyroStore
import JSON
import Logging
import MQTTPublisher
import PosixThreads
import Sensors
import ServiceLifecycle

/// Publishes Home Assistant MQTT discovery (``HomeAssistantDiscovery``) through the publisher's
/// own connection (`MQTTPublisher.publishDirect`, not the outbox: these documents are derived
/// from the configuration and the live status, so they are re-sent rather than stored).
///
/// - On every new broker connection (`status.connections` changes): clears stale topics, then
///   publishes every discovery document (retained, QoS 1) and the state document. Once per
///   connection, so a broker that lost its retained messages gets them back, and a refusal (an
///   ACL) is not retried every second.
/// - Every `tick` while connected: discovery documents that changed (a board's model and
///   firmware become known once it is initialised), and the state document every
///   `statePeriod`, or at once when a sensor's state, battery or session changes.
/// - Stale topics: the config topics (and the state topic) this gateway published are listed
///   in `homeassistant-topics.json` in the data directory, written before they are published.
///   At start, listed topics the configuration no longer produces (a removed sensor, another
///   discovery prefix or topic prefix, discovery turned off) get a zero-byte retained publish,
///   and leave the list once the broker acknowledged it. With discovery off, the service only
///   does that clean-up (and deletes the list).
///
/// Why a file rather than subscribing to the broker's retained configs at connect: a wildcard
/// subscription (`dp/+/+/+/config`) also receives every other device's discovery documents,
/// has no end-of-retained marker to know when the list is complete, and may be denied by the
/// broker's ACL; the store has no key-value table for it (it would need a migration). The file
/// is small, rewritten atomically, and lives next to the store it belongs with.
public struct HomeAssistantService: Service {
    public let discovery: HomeAssistantDiscovery
    let publisher: MQTTPublisher
    let store: GyroStore
    let capture: CaptureEngine
    let sensors: SensorFleet
    let logger: Logger
    let tick: Duration
    let statePeriod: Duration

    public static let ledgerFileName = "homeassistant-topics.json"

    public init(configuration: GatewayConfiguration, publisher: MQTTPublisher, store: GyroStore, capture: CaptureEngine,
                sensors: SensorFleet, logger: Logger, version: String = gyrogateVersion,
                tick: Duration = .seconds(1), statePeriod: Duration = .seconds(10)) {
        discovery = HomeAssistantDiscovery(configuration: configuration, version: version)
        self.publisher = publisher
        self.store = store
        self.capture = capture
        self.sensors = sensors
        var logger = logger
        logger[metadataKey: "subsystem"] = "mqtt"
        self.logger = logger
        self.tick = tick
        self.statePeriod = statePeriod
    }

    /// Whether a gateway with this configuration needs the service: discovery is on, or was on
    /// in an earlier run and left topics to clear.
    public static func isNeeded(_ configuration: GatewayConfiguration) -> Bool {
        configuration.homeAssistant.enabled || FileManager.default.fileExists(atPath: ledgerPath(configuration))
    }

    static func ledgerPath(_ configuration: GatewayConfiguration) -> String {
        URL(fileURLWithPath: configuration.dataDirectory).appendingPathComponent(ledgerFileName).path
    }

    public func run() async throws {
        do {
            // On the writer's thread, where the publisher, the engine and the store it reads live,
            // sleeping on its alarm: a `Task.sleep` tick would wake two dispatch threads each time.
            let writer = store.writerExecutor
            try await withTaskExecutorPreference(writer) {
                try await cancelWhenGracefulShutdown { try await loop(sleepingOn: writer) }
            }
        } catch is CancellationError {}
    }

    private func loop(sleepingOn writer: ThreadExecutor) async throws {
        let enabled = discovery.configuration.homeAssistant.enabled
        let ledger = TopicLedger(path: Self.ledgerPath(discovery.configuration), logger: logger)
        let previous = ledger.load()
        let owned = enabled ? Set(discovery.documents().keys).union([discovery.stateTopic]) : []
        var stale = previous.subtracting(owned)
        // Listed before anything is published: a crash after a publish never forgets a topic.
        if previous != owned.union(stale) { ledger.save(owned.union(stale)) }
        if enabled {
            logger.info("Home Assistant discovery on", metadata: [
                "discoveryPrefix": "\(discovery.configuration.homeAssistant.discoveryPrefix)", "entities": "\(owned.count - 1)",
                "stateTopic": "\(discovery.stateTopic)",
            ])
        }
        if !stale.isEmpty {
            logger.info("clearing Home Assistant topics no longer configured", metadata: ["topics": "\(stale.sorted())"])
        }

        var syncedConnection = -1
        var published: [String: [UInt8]] = [:]
        var lastStateAt: ContinuousClock.Instant?
        var lastTrigger: [String] = []
        var rate = SampleRate(committed: await capture.counters.committedSamples, at: .now)
        while !Task.isCancelled {
            if !enabled && stale.isEmpty {
                ledger.remove()
                // Nothing more to do; a service that returns would stop the gateway.
                while true { try await writer.sleep(for: .seconds(3600)) }
            }
            let status = await publisher.status
            if status.state == .connected {
                let fullSync = status.connections != syncedConnection
                if fullSync {
                    syncedConnection = status.connections
                    published = [:]
                    lastStateAt = nil
                    var cleared: [String] = []
                    for topic in stale.sorted() {
                        if await publisher.publishDirect(topic: topic, payload: [], retain: true) { cleared.append(topic) }
                    }
                    if !cleared.isEmpty {
                        stale.subtract(cleared)
                        ledger.save(owned.union(stale))
                        logger.info("cleared Home Assistant topics", metadata: ["topics": "\(cleared)", "left": "\(stale.count)"])
                    }
                }
                if enabled {
                    let sensorStatus = await sensors.status()
                    for (topic, document) in discovery.documents(sensors: sensorStatus).sorted(by: { $0.key < $1.key })
                    where published[topic] != document {
                        // Recorded even when refused (an ACL): tried again on the next connection, not every tick.
                        published[topic] = document
                        if await !publisher.publishDirect(topic: topic, payload: document, retain: true) {
                            // The connection went: everything is sent again on the next one.
                            guard await publisher.status.state == .connected else { break }
                            logger.warning("the broker did not acknowledge a Home Assistant discovery document", metadata: ["topic": "\(topic)"])
                        }
                    }
                    let open = Set(await capture.openSessions().map { $0.device.uppercased() })
                    let trigger = sensorStatus.map { "\($0.address) \($0.state) \($0.batteryPercent ?? -1) \(open.contains($0.address.uppercased()))" }
                        + open.sorted()
                    let now = ContinuousClock.now
                    if lastStateAt.map({ now - $0 >= statePeriod }) ?? true || trigger != lastTrigger {
                        lastStateAt = now
                        lastTrigger = trigger
                        let snapshot = await snapshot(sensors: sensorStatus, open: open, rate: &rate)
                        _ = await publisher.publishDirect(topic: discovery.stateTopic, payload: discovery.state(snapshot), retain: true)
                    }
                }
            }
            try await writer.sleep(for: tick)
        }
    }

    private func snapshot(sensors: [SensorStatus], open: Set<String>, rate: inout SampleRate) async -> HomeAssistantDiscovery.Snapshot {
        let outbox = (try? await store.outboxStats().depth) ?? 0
        let used = (try? await store.usedBytes()) ?? 0
        let committed = await capture.counters.committedSamples
        return HomeAssistantDiscovery.Snapshot(outboxDepth: outbox, storeUsedBytes: used, storeMaxBytes: store.maxBytes,
                                               samplesPerSecond: rate.update(committed: committed, at: .now),
                                               sensors: sensors, openSessions: open)
    }
}

/// Committed samples per second since the previous state, over at least a second (a state
/// published on a change soon after another keeps the previous rate); the first one counts
/// from the service's start.
struct SampleRate {
    var last: (samples: Int64, at: ContinuousClock.Instant)
    var rate: Double?

    init(committed: Int64, at start: ContinuousClock.Instant) {
        last = (committed, start)
    }

    mutating func update(committed: Int64, at now: ContinuousClock.Instant) -> Double? {
        let elapsed = now - last.at
        guard elapsed >= .seconds(1) || (rate == nil && elapsed > .zero) else { return rate }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        rate = Double(max(0, committed - last.samples)) / seconds
        self.last = (committed, now)
        return rate
    }
}

/// The topics this gateway has published Home Assistant documents on, as a JSON file:
/// `{"topics": ["homeassistant/sensor/…/config", …]}`.
struct TopicLedger {
    let path: String
    let logger: Logger

    func load() -> Set<String> {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        guard let items = (try? JSONValue(parsing: data))?["topics"]?.array, case let topics = items.compactMap(\.string),
              topics.count == items.count else {
            logger.warning("unreadable list of Home Assistant topics; ignored", metadata: ["path": "\(path)"])
            return []
        }
        return Set(topics)
    }

    func save(_ topics: Set<String>) {
        do {
            let document: JSONValue = ["topics": topics.jsonValue]
            try Data(document.encoded([.sortedKeys, .withoutEscapingSlashes])).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            logger.error("cannot write the list of Home Assistant topics; a sensor removed later may keep its entities",
                         metadata: ["path": "\(path)", "error": "\(error)"])
        }
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
