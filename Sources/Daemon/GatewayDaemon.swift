import Capture
import Foundation
import GatewayConfig
import GyroStore
import Logging
import Sensors
import ServiceLifecycle

/// Builds the gateway's services from a configuration and runs them in one `ServiceGroup`:
/// graceful shutdown on SIGTERM/SIGINT runs in reverse order, so capture commits its open
/// chunks before the store is left.
public struct GatewayDaemon: Sendable {
    public let configuration: GatewayConfiguration
    public let store: GyroStore
    public let capture: CaptureEngine
    /// The sensors and their supervisors; ``SensorFleet/status()`` is the per-sensor status.
    public let sensors: SensorFleet
    let logger: Logger

    public init(configuration: GatewayConfiguration, logger: Logger) throws {
        self.configuration = configuration
        self.logger = logger
        store = try GyroStore.open(directory: configuration.dataDirectory, maxBytes: configuration.retention.maxStoreBytes, logger: logger)
        capture = CaptureEngine(store: store, rules: CaptureRules(configuration), calendar: PeriodCalendar(configuration),
                                renderer: DocumentRenderer(location: configuration.location.map { ($0.latitude, $0.longitude) }),
                                logger: logger)
        sensors = SensorFleet(configuration, engine: capture, logger: logger)
    }

    public func run() async throws {
        let recovered = try await capture.recover()
        if !recovered.isEmpty {
            logger.warning("closed sessions left open by the previous run", metadata: ["subsystem": "daemon", "sessions": "\(recovered.map(\.id))"])
        }
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: CaptureService(engine: capture, store: store, logger: logger)),
                    // After capture: graceful shutdown stops the sensors first, then closes sessions.
                    .init(service: SensorService(configuration: configuration, fleet: sensors, logger: logger)),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        logger.info("gyrogate running", metadata: ["subsystem": "daemon", "gateway": "\(configuration.gatewayId)",
                                                   "store": "\(configuration.dataDirectory)"])
        try await group.run()
    }
}

extension CaptureRules {
    public init(_ configuration: GatewayConfiguration) {
        self.init(chunkSize: configuration.capture.chunkSize,
                  commitInterval: .milliseconds(configuration.capture.commitIntervalMs),
                  autoStart: configuration.sessions.autoStart,
                  idleTimeoutMs: Double(configuration.sessions.idleTimeoutSeconds) * 1000,
                  maxDurationMs: Double(configuration.sessions.maxDurationMinutes) * 60_000,
                  retainChunks: configuration.mqtt.retainChunks)
    }
}

extension PeriodCalendar {
    public init(_ configuration: GatewayConfiguration) {
        self.init(timeZone: configuration.timeZone, firstWeekday: configuration.firstWeekday)
    }
}
