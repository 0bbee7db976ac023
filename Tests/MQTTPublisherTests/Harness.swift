import Capture
import Foundation
import GyroStore
import Logging
import MQTTPublisher
import TestSupport
import XCTest

/// A store, a capture engine that wakes the publisher on commit, and a running publisher.
final class Gateway: @unchecked Sendable {
    let directory: TemporaryDirectory
    let store: GyroStore
    let publisher: MQTTPublisher
    let engine: CaptureEngine
    var task: Task<Void, Never>?

    init(port: Int, gatewayId: String = "gw-test", chunkSize: Int = 50, configure: (inout PublisherConfiguration) -> Void = { _ in }) throws {
        directory = try TemporaryDirectory("mqtt-gateway")
        store = try GyroStore.open(directory: directory.path, logger: testLogger())
        var configuration = PublisherConfiguration(host: "127.0.0.1", port: port, clientId: "gyrogate-\(gatewayId)", gatewayId: gatewayId)
        configuration.reconnectMinimum = .milliseconds(100)
        configuration.reconnectMaximum = .milliseconds(500)
        configure(&configuration)
        let publisher = MQTTPublisher(store: store, configuration: configuration, logger: testLogger("gyrogate.mqtt"))
        self.publisher = publisher
        engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: chunkSize, commitInterval: .milliseconds(50)),
                               calendar: PeriodCalendar(timeZone: .utc), logger: testLogger(),
                               onCommit: { publisher.outboxChanged() })
    }

    func start() {
        let publisher = self.publisher
        task = Task { await publisher.run() }
    }

    func stop() async {
        publisher.shutdown()
        await task?.value
        task = nil
    }

    /// One closed session of `samples` gyro samples at 50 Hz starting at `startMs`.
    @discardableResult
    func session(device: String, user: String = "u1", startMs: Double, samples: Int) async throws -> SessionRecord {
        let sensor = SensorIdentity(device: device, userId: user)
        let record = try await engine.startSession(sensor: sensor, atMs: startMs)
        try await feed(sensor: sensor, startMs: startMs, from: 0, count: samples)
        _ = try await engine.stopSession(device: device)
        return record
    }

    func feed(sensor: SensorIdentity, startMs: Double, from index: Int64, count: Int) async throws {
        let batch = (0..<count).map { i -> StoredSample in
            let n = index + Int64(i)
            return StoredSample(timestampMs: startMs + Double(n) * 20, x: Float(n), y: 1, z: 2)
        }
        try await engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: index, samples: batch)
    }

    func outboxDepth() async -> Int { (try? await store.outboxStats().depth) ?? -1 }

    func waitForEmptyOutbox(timeout: Double = 20) async -> Bool {
        await eventually(timeout: timeout) { await self.outboxDepth() == 0 }
    }
}

func requireBroker() throws {
    if MosquittoBroker.executable == nil {
        if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail("mosquitto is not installed") }
        throw XCTSkip("mosquitto is not installed (bash Tests/run-tests.sh installs it)")
    }
}

let epochMs: Double = 1_760_000_000_000
