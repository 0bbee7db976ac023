import Admin
import Capture
import FoundationEssentials
import GatewayConfig
import GyroStore
import HostTime
import Logging
import MQTTPublisher
import Sensors
import ServiceLifecycle

/// Builds the gateway's services from a configuration and runs them in one `ServiceGroup`:
/// graceful shutdown on SIGTERM/SIGINT runs in reverse order, so capture commits its open
/// chunks before the store is left.
public struct GatewayDaemon: Sendable {
    public let configuration: GatewayConfiguration
    public let store: GyroStore
    public let capture: CaptureEngine
    public let publisher: MQTTPublisher
    /// The sensors and their supervisors; `SensorFleet.status()` is the per-sensor status.
    public let sensors: SensorFleet
    /// The fleet's coordination, when the `fleet` section is there.
    let fleet: FleetService?
    let controller = ControllerMonitor()
    let logger: Logger
    /// What the admin API shows from modules it does not import (publisher, BLE host).
    public var adminProviders = AdminProviders()
    /// The version the admin API reports.
    public var version = "0.0.0"

    public init(configuration: GatewayConfiguration, logger: Logger) throws {
        LargeDocumentAllocator.configure()
        self.configuration = configuration
        self.logger = logger
        store = try GyroStore.open(directory: configuration.dataDirectory, maxBytes: configuration.retention.maxStoreBytes, logger: logger)
        let publisher = MQTTPublisher(store: store, configuration: PublisherConfiguration(configuration), logger: logger)
        self.publisher = publisher
        capture = CaptureEngine(store: store, rules: CaptureRules(configuration), calendar: PeriodCalendar(configuration),
                                renderer: DocumentRenderer(location: configuration.location.map { ($0.latitude, $0.longitude) }),
                                logger: logger, now: { GatewayClock.process.timeline() * 1000 }, clock: GatewayClock.process,
                                onCommit: { publisher.outboxChanged() })
        let fleet = try FleetService.make(configuration, publisher: publisher, logger: logger)
        self.fleet = fleet
        sensors = SensorFleet(configuration, engine: capture, claims: fleet?.coordinator, logger: logger)
        adminProviders = .daemon(publisher: publisher, sensors: sensors, controller: controller, transport: configuration.bluetooth.transport.description)
        if let fleet {
            let addresses = configuration.sensors.map(\.address)
            adminProviders.fleetStatus = { await fleet.status(sensors: addresses) }
        }
    }

    public func run() async throws {
        // Before touching sessions: a second daemon on the same store must not close the
        // sessions of the one already serving.
        let admin = try adminServices()
        // From here on a step of the wall clock re-dates what this run dated (CaptureService).
        GatewayClock.process.startWatching()
        // A board that logs its stream holds what a crash missed: its session goes on, and the
        // backfill after the reconnect fills the hole.
        let logging = Set(configuration.sensors.filter { $0.backfill != nil }.map(\.address))
        let recovered = try await capture.recover(continuing: logging)
        if !recovered.isEmpty {
            logger.warning("closed sessions left open by the previous run", metadata: ["subsystem": "daemon", "sessions": "\(recovered.map(\.id))"])
        }
        // Built step by step: one long concatenated literal is more than Swift 6.2 (the arm64
        // package's compiler) type-checks in reasonable time.
        typealias Entry = ServiceGroupConfiguration.ServiceConfiguration
        // First, so it stops last: capture's final documents are committed before it leaves.
        var services: [Entry] = [.init(service: MQTTPublisherService(publisher: publisher))]
        services += homeAssistantServices()
        services.append(.init(service: CaptureService(engine: capture, logger: logger)))
        // A damaged store stops the gateway gracefully: the sensors are told to stop first.
        services.append(.init(service: StoreCheckService(store: store, logger: logger), failureTerminationBehavior: .gracefullyShutdownGroup))
        // Before the sensors, so it stops after them and reports this gateway offline last.
        if let fleet { services.append(.init(service: fleet)) }
        // After capture: graceful shutdown stops the sensors first, then closes sessions.
        services.append(.init(service: SensorService(configuration: configuration, fleet: sensors, controller: controller, logger: logger)))
        services += admin
        let group = ServiceGroup(
            configuration: .init(
                services: services,
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        logger.info("gyrogate running", metadata: ["subsystem": "daemon", "gateway": "\(configuration.gatewayId)",
                                                   "store": "\(configuration.dataDirectory)"])
        // Never silently: a longer commit interval is a longer crash window, covered by the boards' logs.
        let commits = configuration.capture.commitInterval(sensors: configuration.sensors)
        let level: Logger.Level = commits.ms > configuration.capture.commitIntervalMs ? .notice
            : configuration.capture.backfillCommitIntervalMs == nil ? .info : .warning
        logger.log(level: level, "capture commits every \(commits.ms) ms", metadata: ["subsystem": "capture", "setting": "\(commits.reason)"])
        try await group.run()
        await endStoreRun()
    }

    /// The store's WAL left at the start of its next cycle, so that the next start does not
    /// write the last one into the file again (``GyroStore/endRun()``). Everything is committed
    /// already: a failure here costs the next start that write, nothing else.
    func endStoreRun() async {
        do {
            let stop = try await store.endRun()
            logger.info("store stopped cleanly", metadata: ["subsystem": "store", "walFrames": "\(stop.cycleFrames)",
                                                            "nextCycle": "\(stop.nextCycleStarted ? "started" : "not started (a reader was still reading)")"])
        } catch {
            logger.warning("store: could not start the WAL's next cycle at the stop", metadata: ["subsystem": "store", "error": "\(error)"])
        }
    }
}

extension GatewayDaemon {
    /// The admin socket, the systemd watchdog and the live view; READY=1 is sent once the
    /// socket listens.
    func adminServices() throws -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let notifier = SystemdNotifier(environment: ProcessInfo.processInfo.environment)
        let settings = configuration.admin
        if AdminSocketFile.probe(settings.socketPath) == .live {
            throw AdminSetupError("admin socket \(settings.socketPath) is in use: another gyrogate (or another program) answers on it; stop it or choose another admin.socketPath")
        }
        let access = try AdminAccessPolicy(allowedUids: settings.allowedUids, allowedGroups: settings.allowedGroups)
        let api = AdminAPI(configuration: configuration, store: store, engine: capture, providers: adminProviders, version: version, access: access)
        var adminLogger = logger
        adminLogger[metadataKey: "subsystem"] = "admin"
        let server = AdminServer(api: api, settings: settings, logger: adminLogger) {
            notifier.send("READY=1\nSTATUS=capturing; admin socket \(settings.socketPath)")
        }
        let watchdog = WatchdogService(notifier: notifier, store: store, engine: capture, logger: logger,
                                       stallAfter: .milliseconds(max(10_000, 5 * configuration.capture.commitInterval(sensors: configuration.sensors).ms)))
        return [.init(service: server), .init(service: watchdog)] + webServices(api: api)
    }
}

extension GatewayDaemon {
    /// Home Assistant discovery when enabled, or when an earlier run left entities to remove.
    func homeAssistantServices() -> [ServiceGroupConfiguration.ServiceConfiguration] {
        guard HomeAssistantService.isNeeded(configuration) else { return [] }
        return [.init(service: HomeAssistantService(configuration: configuration, publisher: publisher, store: store, capture: capture,
                                                    sensors: sensors, logger: logger))]
    }
}

extension CaptureRules {
    public init(_ configuration: GatewayConfiguration) {
        self.init(chunkSize: configuration.capture.chunkSize,
                  commitInterval: .milliseconds(configuration.capture.commitInterval(sensors: configuration.sensors).ms),
                  autoStart: configuration.sessions.autoStart,
                  idleTimeoutMs: Double(configuration.sessions.idleTimeoutSeconds) * 1000,
                  maxDurationMs: Double(configuration.sessions.maxDurationMinutes) * 60_000,
                  retainChunks: configuration.mqtt.retainChunks)
        newChunkAtGap = Set(configuration.sensors.filter { $0.backfill != nil }.map { $0.address.uppercased() })
    }
}

extension PeriodCalendar {
    public init(_ configuration: GatewayConfiguration) {
        self.init(timeZone: configuration.timeZone, firstWeekday: configuration.firstWeekday)
    }
}
