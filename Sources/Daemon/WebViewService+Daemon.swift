import Admin
import Capture
import Logging
import Sensors
import ServiceLifecycle
import WebView

extension GatewayDaemon {
    /// The live view when `web` is configured: its tap on the capture feed and its listener.
    func webServices(api: AdminAPI) -> [ServiceGroupConfiguration.ServiceConfiguration] {
        guard let settings = configuration.web else { return [] }
        let tap = LiveTap(pointsPerSecond: settings.pointsPerSecond)
        capture.feed.setLiveTap(tap)
        var webLogger = logger
        webLogger[metadataKey: "subsystem"] = "web"
        let fleet = sensors
        let server = WebServer(settings: settings, api: api, tap: tap, sensors: { await fleet.status().map(LiveSensor.init) }, logger: webLogger)
        return [.init(service: server)]
    }
}

extension LiveSensor {
    init(_ status: SensorStatus) {
        self.init(address: status.address, userId: status.userId, state: status.state.rawValue, batteryPercent: status.batteryPercent,
                  odrHz: status.odrHz, samplesReceived: status.samplesReceived, samplesExpected: status.samplesExpected,
                  gaps: status.gaps, missingSamples: status.missingSamples, backfill: status.backfill,
                  backfilledSamples: status.backfilledSamples, lastSampleMs: status.lastSampleMs, lastError: status.lastError)
    }
}
