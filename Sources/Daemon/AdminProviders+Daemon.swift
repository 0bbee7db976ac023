import Admin
import BLEHost
import FoundationEssentials
import MQTTPublisher
import Sensors
import ZoneInfo
import PosixThreads

extension AdminProviders {
    /// The admin API's view of the modules it does not import: the MQTT publisher (state with
    /// the broker's last reason, resync on request) and the sensors (state per address).
    static func daemon(publisher: MQTTPublisher, sensors: SensorFleet, controller: ControllerMonitor, transport: String) -> AdminProviders {
        AdminProviders(
            publisherStatus: {
                let status = await publisher.status
                var detail = status.connectedSince.map { "connected since \($0.iso8601UTC), MQTT \(status.protocolVersion)" }
                if let error = status.lastError {
                    detail = [detail, "last error at \(error.at.iso8601UTC): \(error)"].compactMap { $0 }.joined(separator: "; ")
                }
                return Admin.PublisherStatus(state: status.state.rawValue, detail: detail, publishedTotal: Int64(status.acknowledged),
                                             broker: status.broker, failovers: status.failovers)
            },
            bluetoothStatus: {
                let sensors = await sensors.status()
                let streaming = sensors.filter { $0.state == .streaming }.count
                let interval = ThreadExecutor.dataPlane.readInterval
                let reads = interval > 0 ? "; reads batched every \(Int(interval * 1000)) ms" : ""
                return BluetoothStatus(
                    controller: "\(transport): \(await controller.state); \(streaming) of \(sensors.count) sensors streaming\(reads)",
                    sensors: Dictionary(sensors.map { sensor in
                        var state = sensor.state.rawValue
                        if let battery = sensor.batteryPercent { state += ", battery \(battery) %" }
                        state += ", \(sensor.samplesReceived)/\(sensor.samplesExpected) samples, \(sensor.gaps) gaps, \(sensor.reconnects) reconnects"
                        if let boardTime = sensor.boardTime { state += boardTime ? ", board time" : ", arrival time" }
                        if sensor.backfill {
                            state += ", log: \(sensor.logEntries) entries pending, \(sensor.backfilledSamples) samples backfilled"
                        }
                        if let error = sensor.lastError, sensor.state != .streaming { state += ", last error: \(error)" }
                        if let fleet = sensor.fleet { state += ", fleet: \(fleet)" }
                        return (sensor.address, state)
                    }, uniquingKeysWith: { first, _ in first }),
                    live: Dictionary(sensors.map { ($0.address, SensorLive($0)) }, uniquingKeysWith: { first, _ in first }))
            },
            resync: {
                publisher.resync()
                return "resync requested: every retained document will be published again, and rows parked after repeated refusals are retried"
            })
    }
}

extension SensorLive {
    init(_ sensor: SensorStatus) {
        self.init(state: sensor.state.rawValue, samplesReceived: sensor.samplesReceived, samplesExpected: sensor.samplesExpected,
                  gaps: sensor.gaps, missingSamples: sensor.missingSamples, reconnects: sensor.reconnects,
                  failedAttempts: sensor.failedAttempts, batteryPercent: sensor.batteryPercent, boardTime: sensor.boardTime,
                  logEntries: sensor.backfill ? sensor.logEntries : nil, backfilledSamples: sensor.backfill ? sensor.backfilledSamples : nil,
                  lastError: sensor.lastError)
        fleet = sensor.fleet
    }
}
