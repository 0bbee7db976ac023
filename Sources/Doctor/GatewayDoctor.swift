import FoundationEssentials
import GatewayConfig
import HostTime
import Logging

/// `gyrogate doctor`: checks that a gateway configured by one file can run here — the
/// configuration, the Bluetooth transport, the process's capabilities, the broker (connection,
/// credentials, TLS, a test publish under the topic prefix), the data directory and its free
/// space, the admin socket's directory and permissions, and the clock.
///
/// Checks only look: the transport and the broker are opened and closed again, the probe file
/// in a directory is removed, and nothing is created for the gateway. Run it with the gateway
/// stopped: a running one holds the HCI adapter.
public struct GatewayDoctor: Sendable {
    public struct Options: Sendable {
        /// Where the MQTT password may come from (`GYROGATE_MQTT_PASSWORD`).
        public var environment: [String: String]
        /// Longest wait for the broker's CONNACK, then again for the test publish's PUBACK.
        public var brokerTimeout: Duration
        /// The clock the clock check reads.
        public var now: @Sendable () -> Date
        /// Whether the kernel says the clock is synchronised (`nil`: it could not be asked).
        public var clockSynchronised: @Sendable () -> Bool?
        /// Where the capabilities are read (`CapEff:`).
        public var processStatusPath: String

        public init(environment: [String: String] = ProcessInfo.processInfo.environment, brokerTimeout: Duration = .seconds(10),
                    now: @escaping @Sendable () -> Date = { Date() }, processStatusPath: String = "/proc/self/status",
                    clockSynchronised: @escaping @Sendable () -> Bool? = {
                        let state = GatewayClock.Kernel.system.synchronised()
                        return state.maxError == nil ? nil : state.synchronised
                    }) {
            self.environment = environment
            self.brokerTimeout = brokerTimeout
            self.now = now
            self.processStatusPath = processStatusPath
            self.clockSynchronised = clockSynchronised
        }
    }

    public let options: Options
    let logger: Logger

    public init(options: Options = Options(), logger: Logger) {
        self.options = options
        var logger = logger
        logger[metadataKey: "subsystem"] = "doctor"
        self.logger = logger
    }

    /// Runs every check for the configuration file at `configPath`. A configuration that does
    /// not load is one failed check; only the clock is checked after it.
    public func run(configPath: String) async -> DoctorReport {
        var results: [CheckResult] = []
        let configuration: GatewayConfiguration
        switch ConfigCheck.load(configPath, environment: options.environment) {
        case .success(let loaded):
            configuration = loaded
            results.append(.ok("config", ConfigCheck.summary(configPath, loaded)))
        case .failure(let problem):
            results.append(.problem("config", problem))
            results.append(ClockCheck.run(now: options.now(), synchronised: options.clockSynchronised()))
            log(results)
            return DoctorReport(results: results)
        }
        results += await run(configuration)
        log(results)
        return DoctorReport(results: results)
    }

    /// Every check but the configuration's, for a loaded configuration.
    public func run(_ configuration: GatewayConfiguration) async -> [CheckResult] {
        var results: [CheckResult] = []
        let capabilities = CapabilityCheck.run(configuration.bluetooth.transport, statusPath: options.processStatusPath)
        results.append(await TransportCheck.run(configuration.bluetooth.transport,
                                                canTakeAdapter: CapabilityCheck.hasNetAdmin(statusPath: options.processStatusPath),
                                                logger: logger))
        results.append(capabilities)
        results += await BrokerCheck.run(configuration, timeout: options.brokerTimeout, logger: logger)
        results += StorageCheck.run(configuration)
        results += AdminSocketCheck.run(configuration.admin)
        results.append(ClockCheck.run(now: options.now(), synchronised: options.clockSynchronised()))
        return results
    }

    private func log(_ results: [CheckResult]) {
        for result in results {
            logger.debug("check done", metadata: ["check": "\(result.check)", "status": "\(result.status.rawValue)"])
        }
    }
}
