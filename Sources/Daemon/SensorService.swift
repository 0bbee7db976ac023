import BLEHost
import Capture
import GatewayConfig
import Logging
import MetaWear
import Sensors
import ServiceLifecycle

/// Opens the Bluetooth transport, starts the BLE host and runs the sensor fleet. On graceful
/// shutdown the supervisors stop their boards' streams and disconnect before the host stops
/// (and, the group running in reverse, before capture closes the sessions).
struct SensorService: Service {
    let configuration: GatewayConfiguration
    let fleet: SensorFleet
    let controller: ControllerMonitor
    let logger: Logger

    static let firstRetry = Duration.milliseconds(500)
    static let longestRetry = Duration.seconds(30)

    /// A controller that is not there yet (a dongle not plugged in, an emulator not started,
    /// an adapter still held by bluetoothd), or that goes away while running (unplugged, the
    /// emulator killed, a UART error), is opened again with capped back-off, never fatal: the
    /// rest of the gateway keeps publishing and answering, and the status says why.
    func run() async throws {
        var delay = Self.firstRetry
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let began = ContinuousClock.now
            let reason: String
            do {
                guard let lost = try await runController() else { return }
                reason = "\(lost)"
                // A controller that ran for longer than the longest wait starts over from the
                // first; one that keeps failing right after it starts backs off like a missing one.
                if ContinuousClock.now - began >= Self.longestRetry { delay = Self.firstRetry }
            } catch is CancellationError {
                return
            } catch {
                reason = "\(error)"
                logger.error("bluetooth controller unavailable; retrying", metadata: [
                    "subsystem": "sensor", "transport": "\(configuration.bluetooth.transport)", "error": "\(reason)", "retryInSeconds": "\(delay)",
                ])
            }
            await controller.failed(reason, retryIn: delay)
            do {
                let wait = delay.jittered()
                // An adapter that comes back ends the wait (the kernel announces it).
                let spec = configuration.bluetooth.transport.description
                try await cancelWhenGracefulShutdown { try await AdapterEvents.waitForAdapter(spec, upTo: wait) }
            } catch { return }
            delay = min(delay * 2, Self.longestRetry)
        }
    }

    /// Runs the fleet on one controller until graceful shutdown (returns nil) or until the
    /// controller goes away under it (returns why). Either way the supervisors have stopped
    /// their boards and handed over their samples before the host is stopped.
    ///
    /// - throws: the error that kept the transport from opening or the host from starting.
    private func runController() async throws -> TransportError? {
        let transport = try await TransportFactory.open(configuration.bluetooth.transport.description, logger: logger)
        transport.loop.setReadInterval(seconds: Double(configuration.bluetooth.readIntervalMs) / 1000)
        let host = BLEHost(transport: transport, logger: logger)
        do { try await host.start() } catch {
            await host.stop()
            throw error
        }
        await controller.started()
        logger.info("bluetooth host started", metadata: ["subsystem": "sensor", "transport": "\(configuration.bluetooth.transport)"])
        let connector = BLEMetaWearConnector(host: host)
        let lost = await cancelWhenGracefulShutdown { [fleet, controller, logger, configuration] in
            await withTaskGroup(of: TransportError?.self) { group in
                group.addTask {
                    await fleet.run(connector: connector)
                    return nil
                }
                group.addTask {
                    // The host has ended every link by the time it reports the loss, so the
                    // supervisors record the interruption as a disconnection when they end.
                    guard case let .transportLost(error)? = try? await host.waitUntilEnded() else { return nil }
                    logger.error("bluetooth controller lost; stopping the sensors and opening it again", metadata: [
                        "subsystem": "sensor", "transport": "\(configuration.bluetooth.transport)", "error": "\(error)",
                    ])
                    await controller.lost("\(error)")
                    return error
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
        }
        await host.stop()
        if lost == nil { await controller.stopped() }
        return lost
    }
}

extension SupervisorSettings {
    /// Rates, ranges and board behaviour from the gateway configuration. Rates and ranges are
    /// validated by the configuration reader, so the table lookups succeed.
    public init(_ configuration: GatewayConfiguration) {
        let gyroRate = Gyro.OutputDataRate.allCases.first { $0.hertz == configuration.gyro.odrHz } ?? .hz50
        let gyroRange = Gyro.Range.allCases.first { $0.degreesPerSecond == configuration.gyro.rangeDps } ?? .dps2000
        var accelerometer: Accelerometer.Configuration?
        if configuration.accelerometer.enabled {
            accelerometer = Accelerometer.Configuration(
                outputDataRate: .nearest(to: configuration.accelerometer.odrHz), range: .nearest(to: configuration.accelerometer.rangeG))
        }
        let boards = configuration.boards
        self.init(board: BoardOptions(gyro: .init(outputDataRate: gyroRate, range: gyroRange), accelerometer: accelerometer,
                                      ledOnStreamingStart: boards.ledOnStreaming, subscribeButton: boards.buttonStartsSession),
                  batteryInterval: .seconds(boards.batteryIntervalSeconds), buttonControlsSession: boards.buttonStartsSession,
                  // Half the commit interval at most: the first commit of a stream then comes within
                  // one commit interval of its first sample.
                  warmUp: min(.milliseconds(500), .milliseconds(configuration.capture.commitIntervalMs) / 2))
    }
}

extension SensorFleet {
    /// The fleet a configuration describes: its sensors, and discovery when enabled.
    public init(_ configuration: GatewayConfiguration, engine: CaptureEngine, claims: (any ConnectionClaims)? = nil, logger: Logger) {
        var settings = SupervisorSettings(configuration)
        settings.claims = claims
        if let fleet = configuration.fleet {
            settings.sightingScan = (.seconds(fleet.scanEverySeconds), .milliseconds(fleet.scanForMs))
        }
        self.init(configured: configuration.sensors.map { sensor in
                      Member(address: sensor.address, userId: sensor.userId,
                             backfill: sensor.backfill.map { BoardOptions.Backfill(overwrite: $0.overwrite) })
                  },
                  discovery: configuration.discovery.map { Discovery(userId: $0.userId, maxSensors: $0.maxSensors) },
                  limit: configuration.bluetooth.maxSensors, engine: engine, settings: settings,
                  logger: logger)
    }
}
