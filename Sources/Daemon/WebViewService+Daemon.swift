import Admin
import BLEHost
import Capture
import Logging
import Sensors
import ServiceLifecycle
import Synchronization
import WebView
import PosixThreads

extension GatewayDaemon {
    /// The live view when `web` is configured: its tap on the capture feed and its listener.
    func webServices(api: AdminAPI) -> [ServiceGroupConfiguration.ServiceConfiguration] {
        guard let settings = configuration.web else { return [] }
        let tap = LiveTap(pointsPerSecond: settings.pointsPerSecond)
        capture.feed.setLiveTap(tap)
        var webLogger = logger
        webLogger[metadataKey: "subsystem"] = "web"
        let server = WebServer(settings: settings, api: api, tap: tap, sensors: FleetLiveSource(fleet: sensors), logger: webLogger)
        return [.init(service: server)]
    }
}

/// The live view's view of the sensors. Its ticks are timers of the supervisors' loop with a
/// tolerance, so they fire at a wake-up the loop makes anyway for the sensors' data, and read
/// every sensor's state there synchronously: a tick wakes no thread besides the one it hands
/// the state to.
struct FleetLiveSource: LiveSensorSource {
    let fleet: SensorFleet

    func sensors() async -> [LiveSensor] {
        await fleet.status().map(LiveSensor.init)
    }

    func ticks(first: Double, every: Double, tolerance: Double, _ tick: @escaping @Sendable ([LiveSensor]) -> Void) -> any LiveSensorTicks {
        let ticks = FleetTicks(fleet: fleet, every: every, tolerance: tolerance, tick: tick)
        ticks.arm(after: first, tolerance: min(first, tolerance))
        return ticks
    }
}

final class FleetTicks: LiveSensorTicks {
    let fleet: SensorFleet
    let every: Double
    let tolerance: Double
    let tick: @Sendable ([LiveSensor]) -> Void
    private struct State {
        /// The pending timer's alarm: a fired alarm is over, so each tick arms a new one.
        var alarm: ThreadExecutor.Alarm?
        var stopped = false
    }

    private let state = Mutex(State())

    init(fleet: SensorFleet, every: Double, tolerance: Double, tick: @escaping @Sendable ([LiveSensor]) -> Void) {
        self.fleet = fleet
        self.every = every
        self.tolerance = tolerance
        self.tick = tick
    }

    func arm(after seconds: Double, tolerance: Double) {
        let loop = fleet.loop
        guard let next = state.withLock({ state -> ThreadExecutor.Alarm? in
            guard !state.stopped else { return nil }
            state.alarm = loop.makeAlarm()
            return state.alarm
        }) else { return }
        loop.schedule(after: seconds, tolerance: tolerance, alarm: next) { [self] in
            guard state.withLock({ !$0.stopped && $0.alarm == next }) else { return }
            tick(fleet.statusOnLoop().map(LiveSensor.init))
            arm(after: every, tolerance: self.tolerance)
        }
    }

    func stop() {
        let pending = state.withLock { state in
            state.stopped = true
            return state.alarm.take()
        }
        if let pending { fleet.loop.cancel(pending) }
    }
}

extension LiveSensor {
    init(_ status: SensorStatus) {
        self.init(address: status.address, userId: status.userId, state: status.state.rawValue, batteryPercent: status.batteryPercent,
                  odrHz: status.odrHz, samplesReceived: status.samplesReceived, samplesExpected: status.samplesExpected,
                  gaps: status.gaps, missingSamples: status.missingSamples, backfill: status.backfill,
                  backfilledSamples: status.backfilledSamples, lastSampleMs: status.lastSampleMs, lastError: status.lastError)
        fleet = status.fleet
    }
}
