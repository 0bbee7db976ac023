// Benchmark: the admin socket under load, and what that load costs capture.
//
// 1. Requests per second for GET /v1/status from 50 concurrent clients (blocking POSIX
//    clients on threads, one request per connection, as the CLI does) against an in-process
//    server on a unix socket.
// 2. Capture throughput (CaptureEngine append → store on disk, as store-bench does) alone,
//    then while the socket is under that load, reported as a ratio.
//
// The clients run in this process, so on a 2-core machine they compete for the same CPUs as
// the server and capture: the ratio is a worst case for a busy operator, not a typical one.
//
// usage: swift run -c release admin-bench [SECONDS] [SAMPLES]
import Admin
import Capture
import Foundation
import GatewayConfig
import GyroStore
import Logging

let arguments = CommandLine.arguments
let loadSeconds = arguments.count > 1 ? Double(arguments[1]) ?? 5 : 5
let totalSamples = arguments.count > 2 ? Int(arguments[2]) ?? 400_000 : 400_000
let clients = 50
let folder = (NSTemporaryDirectory() as NSString).appendingPathComponent("gyrogate-admin-bench-\(UUID().uuidString.prefix(8))")
defer { try? FileManager.default.removeItem(atPath: folder) }
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })

let socketPath = folder + "/admin.sock"
let configuration = try GatewayConfiguration.parse(Data("""
    {"gatewayId": "bench", "timeZone": "UTC", "bluetooth": {"transport": "hci:0"}, "mqtt": {"host": "broker"},
     "sensors": [{"address": "C4:BE:84:00:00:01", "userId": "bench", "name": "bench"}],
     "admin": {"socketPath": "\(socketPath)"}}
    """.utf8), baseDirectory: folder)
let store = try GyroStore.open(directory: folder + "/store", logger: logger)
let engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: 2000), calendar: PeriodCalendar(timeZone: .utc), logger: logger)
var api = AdminAPI(configuration: configuration, store: store, engine: engine, version: "bench", access: try AdminAccessPolicy())
let server = AdminServer(api: api, settings: configuration.admin, logger: logger)
let listener = try await server.bind()
// The same server without read coalescing, on a second socket, for comparison.
api.coalescesReads = false
var plainSettings = configuration.admin
plainSettings.socketPath = folder + "/admin-plain.sock"
let plainListener = try await AdminServer(api: api, settings: plainSettings, logger: logger).bind()

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var ok = 0, failed = 0
    func add(ok: Int, failed: Int) { lock.lock(); self.ok += ok; self.failed += failed; lock.unlock() }
    var totals: (ok: Int, failed: Int) { lock.lock(); defer { lock.unlock() }; return (ok, failed) }
}

final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}

/// Runs `clients` threads issuing GET /v1/status until `stop` is set; returns when all ended.
func load(until stop: Flag, counter: Counter, socketPath: String = socketPath) -> Thread {
    let done = DispatchGroup()
    for _ in 0..<clients {
        done.enter()
        let thread = Thread {
            let client = AdminClient(socketPath: socketPath, timeoutSeconds: 30)
            var ok = 0, failed = 0
            while !stop.isSet {
                if (try? client.request("GET", "/v1/status"))?.status == 200 { ok += 1 } else { failed += 1 }
            }
            counter.add(ok: ok, failed: failed)
            done.leave()
        }
        thread.start()
    }
    let waiter = Thread { done.wait() }
    waiter.start()
    return waiter
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

// Samples as a 50 Hz sensor would hand them over, prepared before timing.
let t0 = 1_795_000_000_000.0
func syntheticSample(_ i: Int) -> StoredSample {
    let x = Float(i % 4000) * 0.061, y = Float(i % 3000) * -0.061, z = Float(i % 7) * 12.2
    return StoredSample(timestampMs: t0 + Double(i) * 20, x: x, y: y, z: z)
}
let batches: [[StoredSample]] = stride(from: 0, to: totalSamples, by: 100).map { first in
    (first..<min(first + 100, totalSamples)).map(syntheticSample)
}

/// Samples per second through the engine into the store, for one session on its own sensor.
func captureRun(_ round: Int) async throws -> Double {
    let sensor = SensorIdentity(device: "BENCH:\(round)", userId: "bench\(round)")
    let clock = ContinuousClock()
    let start = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await engine.run() }
        _ = try await engine.startSession(sensor: sensor, atMs: t0)
        var index: Int64 = 0
        for samples in batches {
            try await engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: index, samples: samples)
            index += Int64(samples.count)
        }
        _ = try await engine.stopSession(device: sensor.device)
        group.cancelAll()
    }
    return Double(totalSamples) / seconds(clock.now - start)
}

print("admin-bench: \(clients) clients, \(loadSeconds) s of GET /v1/status; capture of \(totalSamples) samples (2,000-point chunks, WAL, synchronous FULL)")

// 1. Requests per second, the socket alone.
for (label, path) in [("coalesced reads", socketPath), ("no coalescing", plainSettings.socketPath)] {
    let stop = Flag(), counter = Counter()
    let clock = ContinuousClock()
    let start = clock.now
    let waiter = load(until: stop, counter: counter, socketPath: path)
    try await Task.sleep(for: .seconds(loadSeconds))
    stop.set()
    while !waiter.isFinished { try await Task.sleep(for: .milliseconds(10)) }
    let elapsed = seconds(clock.now - start)
    let (ok, failed) = counter.totals
    print("GET /v1/status, \(clients) concurrent clients (\(label)): " + String(format: "%.0f requests/s (%d ok, %d failed in %.1f s)",
                 Double(ok) / elapsed, ok, failed, elapsed))
}

// 2. Capture alone, then under load: a warm-up run, then three rounds of (alone, under load
// with coalescing, under load without), interleaved so that drift on a shared machine hits
// every mode alike; medians are reported.
var round = 1
_ = try await captureRun(round)
var results: [String: [Double]] = [:]
var served: [String: [Double]] = [:]
let modes = [("alone", nil as String?), ("coalesced reads", socketPath), ("no coalescing", plainSettings.socketPath)]
for _ in 0..<3 {
    for (label, path) in modes {
        round += 1
        guard let path else {
            results[label, default: []].append(try await captureRun(round))
            continue
        }
        let stop = Flag(), counter = Counter()
        let clock = ContinuousClock()
        let loadStart = clock.now
        let waiter = load(until: stop, counter: counter, socketPath: path)
        results[label, default: []].append(try await captureRun(round))
        stop.set()
        while !waiter.isFinished { try await Task.sleep(for: .milliseconds(10)) }
        served[label, default: []].append(Double(counter.totals.ok) / seconds(clock.now - loadStart))
    }
}
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let alone = median(results["alone"]!)
print(String(format: "capture alone: %.0f samples/s (median of 3)", alone))
for (label, _) in modes.dropFirst() {
    let loaded = median(results[label]!)
    print("capture while \(clients) clients poll GET /v1/status (\(label)): " + String(format: "%.0f samples/s, ratio to alone %.2f (socket served %.0f requests/s meanwhile)",
                 loaded, loaded / alone, median(served[label]!)))
}
listener.close(promise: nil)
plainListener.close(promise: nil)
