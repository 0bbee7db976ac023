// `swift run -c release mqtt-bench [DOCUMENTS] [WINDOW]`
//
// Starts its own mosquitto on a free loopback port, fills a store's outbox with DOCUMENTS
// (default 20,000) chunk documents of 2,000 points each (~125 KB of JSON, rendered by the
// Capture module's DocumentRenderer), then times draining them at QoS 1 through the
// MQTTPublisher. As the baseline, in the same run: a bare libmosquitto publisher sending the
// same payloads with the same in-flight window, awaiting every PUBACK. Reports documents/s
// and the ratio publisher / baseline.
import CMosquitto
import Capture
import Foundation
import GyroStore
import Logging
import MQTTPublisher
import TestSupport

let arguments = CommandLine.arguments
let count = arguments.count > 1 ? Int(arguments[1]) ?? 20_000 : 20_000
let window = arguments.count > 2 ? Int(arguments[2]) ?? 20 : 20
var logger = Logger(label: "mqtt-bench")
logger.logLevel = .error

let broker = try MosquittoBroker()
try broker.start()
let directory = try TemporaryDirectory("mqtt-bench")
let store = try GyroStore.open(directory: directory.path, maxBytes: 1 << 40, logger: logger)

// MARK: - Payloads

let renderer = DocumentRenderer()
let session = SessionRecord(id: "bench___1760000000", userId: "bench", device: "C4:BE:84:00:00:01", startMs: 1_760_000_000_000, localDate: "2025-10-09")
func renderChunk(_ n: Int) -> (String, [UInt8]) {
    var chunk = ChunkRecord(id: UUID().uuidString.lowercased(), sessionId: session.id, stream: "gyro", seq: n, odrHz: 100, range: 2000, firstIndex: Int64(n) * 2000)
    // Gyro-like values (°/s) from a cheap generator: the system RNG would dominate the fill.
    var state = UInt64(n) &* 6364136223846793005 &+ 1442695040888963407
    func next() -> Float {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Float(Int64(bitPattern: state >> 11) % 6_000_000) / 100_000
    }
    let samples = (0..<2000).map { i -> StoredSample in
        let t = session.startMs + Double(n * 2000 + i) * 10
        return StoredSample(timestampMs: t, x: next() - 30, y: next() - 30, z: next() - 30)
    }
    chunk.count = samples.count
    chunk.startMs = samples.first!.timestampMs
    chunk.endMs = samples.last!.timestampMs
    chunk.isOpen = false
    return (chunk.id, renderer.chunk(chunk, session: session, samples: samples[...]))
}

print("mqtt-bench: \(count) chunk documents, in-flight window \(window), mosquitto on 127.0.0.1:\(broker.port)")
let fillStart = ContinuousClock.now
var totalBytes = 0
var baselinePayloads: [[UInt8]] = []
var batch = StoreChanges()
for n in 0..<count {
    let (id, body) = renderChunk(n)
    totalBytes += body.count
    if baselinePayloads.count < 200 { baselinePayloads.append(body) }
    batch.documents.append(DocumentWrite(path: try DocumentPath("realtime_data/\(id)"), body: body, retain: false, device: session.device))
    if batch.documents.count == 250 || n == count - 1 {
        try await store.commit(batch)
        batch = StoreChanges()
    }
}
let averageKB = Double(totalBytes) / Double(count) / 1000
print(String(format: "filled the outbox: %d documents, %.1f KB average, %.1f MB, in %@", count, averageKB, Double(totalBytes) / 1e6, "\(ContinuousClock.now - fillStart)"))

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

// MARK: - Baseline: bare libmosquitto, same window, awaiting PUBACKs

final class Baseline: @unchecked Sendable {
    let credits: DispatchSemaphore
    let done = DispatchSemaphore(value: 0)
    let lock = NSLock()
    var acked = 0
    var connected = DispatchSemaphore(value: 0)
    init(window: Int) { credits = DispatchSemaphore(value: window) }
}

func runBaseline(payloads: [[UInt8]], count: Int, port: Int, window: Int) -> Duration {
    _ = mosquitto_lib_init()
    let state = Baseline(window: window)
    let handle = mosquitto_new("bench-baseline", true, Unmanaged.passUnretained(state).toOpaque())!
    mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5)
    mosquitto_connect_v5_callback_set(handle) { _, userdata, _, _, _ in
        Unmanaged<Baseline>.fromOpaque(userdata!).takeUnretainedValue().connected.signal()
    }
    mosquitto_publish_v5_callback_set(handle) { _, userdata, _, _, _ in
        let state = Unmanaged<Baseline>.fromOpaque(userdata!).takeUnretainedValue()
        state.credits.signal()
        state.done.signal()
    }
    mosquitto_connect_bind_v5(handle, "127.0.0.1", Int32(port), 30, nil, nil)
    mosquitto_loop_start(handle)
    state.connected.wait()
    let start = ContinuousClock.now
    for n in 0..<count {
        state.credits.wait()
        let payload = payloads[n % payloads.count]
        let topic = "realtime_data/baseline-\(n)"
        _ = payload.withUnsafeBytes { bytes in
            mosquitto_publish_v5(handle, nil, topic, Int32(bytes.count), bytes.baseAddress, 1, false, nil)
        }
    }
    for _ in 0..<count { state.done.wait() }
    let elapsed = ContinuousClock.now - start
    mosquitto_disconnect(handle)
    mosquitto_loop_stop(handle, false)
    mosquitto_destroy(handle)
    return elapsed
}

// MARK: - The publisher, draining the store's outbox

if ProcessInfo.processInfo.environment["MQTT_BENCH_PROBE"] != nil {
    // Where the time goes: reading every row in pages, without publishing or deleting.
    let probeStart = ContinuousClock.now
    var after: Int64 = 0
    var rows = 0
    while true {
        let page = try await store.pendingOutbox(after: after, limit: 64)
        guard let last = page.last else { break }
        after = last.seq
        rows += page.count
    }
    print("probe: read \(rows) rows in pages of 64: \(ContinuousClock.now - probeStart)")
}

var configuration = PublisherConfiguration(host: "127.0.0.1", port: broker.port, clientId: "bench-publisher", gatewayId: "bench")
configuration.inFlightWindow = window
let publisher = MQTTPublisher(store: store, configuration: configuration, logger: logger)
let drainStart = ContinuousClock.now
let running = Task { await publisher.run() }
while try await store.outboxStats().depth > 0 { try await Task.sleep(for: .milliseconds(5)) }
let drained = ContinuousClock.now - drainStart
let status = await publisher.status
publisher.shutdown()
await running.value

let payloads = baselinePayloads
let brokerPort = broker.port
let baseline = await Task.detached { runBaseline(payloads: payloads, count: count, port: brokerPort, window: window) }.value

let publisherRate = Double(count) / seconds(drained)
let baselineRate = Double(count) / seconds(baseline)
print(String(format: "publisher (store outbox -> MQTT v5 QoS 1, deleted after PUBACK): %8.0f documents/s  (%.2f s, %.0f MB/s, acknowledged %d)",
             publisherRate, seconds(drained), publisherRate * averageKB / 1000, status.acknowledged))
print(String(format: "baseline  (bare libmosquitto, same payloads and window):        %8.0f documents/s  (%.2f s, %.0f MB/s)",
             baselineRate, seconds(baseline), baselineRate * averageKB / 1000))
print(String(format: "ratio publisher / baseline: %.2f (target >= 0.8)", publisherRate / baselineRate))
broker.stop()
