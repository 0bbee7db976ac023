// A child process for the MQTT crash test: a store, the capture engine and the publisher in
// one process, as in the daemon.
//
// usage: mqtt-feeder DIR PORT produce   capture sessions forever while publishing them
//        mqtt-feeder DIR PORT drain     publish until the outbox is empty, then exit 0
// The parent kills `produce` with SIGKILL at random points.
import Capture
import Foundation
import GyroStore
import Logging
import MQTTPublisher

let arguments = CommandLine.arguments
guard arguments.count == 4, let port = Int(arguments[2]), ["produce", "drain"].contains(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: mqtt-feeder DIR PORT produce|drain\n".utf8))
    exit(64)
}
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
var logger = Logger(label: "mqtt-feeder")
logger.logLevel = ProcessInfo.processInfo.environment["FEEDER_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .error
let store = try GyroStore.open(directory: arguments[1], logger: logger)
var configuration = PublisherConfiguration(host: "127.0.0.1", port: port, clientId: "gyrogate-feeder", gatewayId: "feeder")
configuration.reconnectMinimum = .milliseconds(100)
configuration.reconnectMaximum = .milliseconds(500)
let publisher = MQTTPublisher(store: store, configuration: configuration, logger: logger)
let engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: 50, commitInterval: .milliseconds(20)),
                           calendar: PeriodCalendar(timeZone: .utc), logger: logger,
                           onCommit: { publisher.outboxChanged() })
_ = try await engine.recover()
let running = Task { await publisher.run() }

if arguments[3] == "drain" {
    while try await store.outboxStats().depth > 0 { try await Task.sleep(for: .milliseconds(20)) }
    publisher.shutdown()
    await running.value
    say("DRAINED")
    exit(0)
}

let sensor = SensorIdentity(device: "C4:BE:84:00:00:01", userId: "crash")
var session = 0
while true {
    let startMs = (Date().timeIntervalSince1970 * 1000).rounded() + Double(session) * 7_000
    try await engine.startSession(sensor: sensor, atMs: startMs)
    for batch in 0..<12 {
        let samples = (0..<25).map { i -> StoredSample in
            let n = Int64(batch * 25 + i)
            return StoredSample(timestampMs: startMs + Double(n) * 20, x: Float(n), y: 0, z: 1)
        }
        try await engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: Int64(batch * 25), samples: samples)
        try await Task.sleep(for: .milliseconds(5))
    }
    _ = try await engine.stopSession(device: sensor.device)
    session += 1
    say("SESSION \(session)")
}
