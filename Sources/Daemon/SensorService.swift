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

    /// A controller that is not there yet (a dongle not plugged in, an emulator not started,
    /// an adapter still held by bluetoothd) is retried with capped back-off, never fatal: the
    /// rest of the gateway keeps publishing and answering, and the status says why.
    func run() async throws {
        var delay = Duration.milliseconds(500)
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await runOnce()
                return
            } catch is CancellationError {
                return
            } catch {
                await controller.failed("\(error)", retryIn: delay)
                logger.error("bluetooth controller unavailable; retrying", metadata: [
                    "subsystem": "sensor", "transport": "\(configuration.bluetooth.transport)", "error": "\(error)", "retryInSeconds": "\(delay)",
                ])
                do {
                    let wait = delay.jittered()
                    try await cancelWhenGracefulShutdown { try await Task.sleep(for: wait) }
                } catch { return }
                delay = min(delay * 2, .seconds(30))
            }
        }
    }

    private func runOnce() async throws {
        let transport = try await TransportFactory.open(configuration.bluetooth.transport.description, logger: logger)
        let host = BLEHost(transport: transport, logger: logger)
        do { try await host.start() } catch {
            await host.stop()
            throw error
        }
        await controller.started()
        logger.info("bluetooth host started", metadata: ["subsystem": "sensor", "transport": "\(configuration.bluetooth.transport)"])
        let connector = BLEMetaWearConnector(host: host)
        await cancelWhenGracefulShutdown { await fleet.run(connector: connector) }
        await host.stop()
        await controller.stopped()
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
                  batteryInterval: .seconds(boards.batteryIntervalSeconds), buttonControlsSession: boards.buttonStartsSession)
    }
}

extension SensorFleet {
    /// The fleet a configuration describes: its sensors, and discovery when enabled.
    public init(_ configuration: GatewayConfiguration, engine: CaptureEngine, logger: Logger) {
        self.init(configured: configuration.sensors.map { Member(address: $0.address, userId: $0.userId) },
                  discovery: configuration.discovery.map { Discovery(userId: $0.userId, maxSensors: $0.maxSensors) },
                  limit: configuration.bluetooth.maxSensors, engine: engine, settings: SupervisorSettings(configuration),
                  logger: logger)
    }
}
