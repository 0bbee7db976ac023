// `swift run -c release mqtt-bench [DOCUMENTS] [WINDOW] [--points N] [--rounds R] [--pinned-broker] [--default-allocator] [--store-bound] [--cold-store]`
//
// Starts its own mosquitto on a free loopback port and renders DOCUMENTS (default 20,000) chunk
// documents of 2,000 points each (~140 KB of JSON, by the Capture module's DocumentRenderer).
// Then, R times (default 3), interleaved and alternating which goes first:
//   - the MQTTPublisher draining the store's outbox, filled with those documents, at QoS 1,
//     rows deleted after their PUBACK, with the store file in the page cache (see `warmStore`);
//   - the baseline: a bare libmosquitto publisher of the same payloads held in memory, with the
//     same in-flight window, awaiting every PUBACK.
// Reports documents/s and CPU time per document (this process and the broker) for each, and the
// median of the rounds' ratios publisher / baseline: on a two-core machine one phase's rate
// moves by ±15 % between runs, so a single pair decides nothing.
//
// `--pinned-broker` fixes the broker's glibc allocator thresholds: a stock mosquitto spends
// either ~30 or ~150 µs of CPU per 140 KB publish depending on its allocation history, which
// moves the ratio between runs. Pinned, the broker is always fast and the client is measured.
import CMosquitto
import Capture
import Daemon
import Foundation
import CSQLite
import GyroStore
import Logging
import MQTTPublisher
import TestSupport

let arguments = CommandLine.arguments
/// `[DOCUMENTS] [WINDOW]`, `--points N`: samples per chunk document (2,000 by default, ~140 KB;
/// 10 gives ~1 KB, to see the fixed cost per message), `--rounds R`.
let (numbers, points, rounds): ([Int], Int, Int) = {
    var numbers: [Int] = [], points = 2000, rounds = 3
    var rest = arguments.dropFirst()
    while let argument = rest.popFirst() {
        if argument == "--points", let value = rest.popFirst().flatMap({ Int($0) }) {
            points = value
        } else if argument == "--rounds", let value = rest.popFirst().flatMap({ Int($0) }), value > 0 {
            rounds = value
        } else if let number = Int(argument) {
            numbers.append(number)
        }
    }
    return (numbers, points, rounds)
}()
let count = numbers.first ?? 20_000
let window = numbers.dropFirst().first ?? 20
let logger = {
    var logger = Logger(label: "mqtt-bench")
    logger.logLevel = ProcessInfo.processInfo.environment["MQTT_BENCH_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .error
    return logger
}()

// The gateway's allocator settings (GatewayDaemon sets them); `--default-allocator` measures without.
if !arguments.contains("--default-allocator") { LargeDocumentAllocator.configure() }
// Logging as deployed (not every packet, as the tests' brokers do).
let pinnedBroker = arguments.contains("--pinned-broker")
let storeBound = arguments.contains("--store-bound")
let coldStore = arguments.contains("--cold-store")
let mqttBroker = try MosquittoBroker(environment: pinnedBroker ? [
    "GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=4194304:glibc.malloc.trim_threshold=33554432",
] : [:], logEverything: false)
try mqttBroker.start()
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
    let samples = (0..<points).map { i -> StoredSample in
        let t = session.startMs + Double(n * 2000 + i) * 10
        return StoredSample(timestampMs: t, x: next() - 30, y: next() - 30, z: next() - 30)
    }
    chunk.count = samples.count
    chunk.startMs = samples.first!.timestampMs
    chunk.endMs = samples.last!.timestampMs
    chunk.isOpen = false
    return (chunk.id, renderer.chunk(chunk, session: session, samples: samples[...]))
}

print("mqtt-bench: \(count) chunk documents of \(points) points, in-flight window \(window), \(rounds) rounds, mosquitto on 127.0.0.1:\(mqttBroker.port)\(pinnedBroker ? " (allocator pinned)" : "")")
let renderStart = ContinuousClock.now
let documents = try (0..<count).map { n in
    let (id, body) = renderChunk(n)
    return DocumentWrite(path: try DocumentPath("realtime_data/\(id)"), body: body, retain: false, device: session.device)
}
let totalBytes = documents.reduce(0) { $0 + $1.body.count }
let averageKB = Double(totalBytes) / Double(count) / 1000
print(String(format: "rendered %d documents, %.1f KB average, %.1f MB, in %@", count, averageKB, Double(totalBytes) / 1e6, "\(ContinuousClock.now - renderStart)"))

/// Writes every document again (a new version each round), which queues each one in the outbox.
func fillOutbox() async throws {
    for start in stride(from: 0, to: documents.count, by: 250) {
        var batch = StoreChanges()
        batch.documents = Array(documents[start..<min(start + 250, documents.count)])
        try await store.commit(batch)
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// With MQTT_BENCH_MARKS set, prints CLOCK_MONOTONIC times of the phases, to cut a profile
/// (`perf record -k CLOCK_MONOTONIC`, then `perf report --time A,B`).
func mark(_ label: String) {
    guard ProcessInfo.processInfo.environment["MQTT_BENCH_MARKS"] != nil else { return }
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    print(String(format: "mark %@: %d.%06d", label, now.tv_sec, now.tv_nsec / 1000))
}

/// CPU seconds (user + system) of this process and of the broker, for the cost per document
/// on each side independently of how the two cores were shared.
struct CPUTimes {
    var own: Double
    var broker: Double
    /// Minor page faults of this process: fresh or remapped pages (see LargeDocumentAllocator).
    var faults: Int

    static func now() -> CPUTimes {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let own = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        return CPUTimes(own: own, broker: brokerSeconds(), faults: usage.ru_minflt)
    }

    static func brokerSeconds() -> Double {
        guard let pid = mqttBroker.pid, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        // Fields after the command name: state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func - (a: CPUTimes, b: CPUTimes) -> CPUTimes { CPUTimes(own: a.own - b.own, broker: a.broker - b.broker, faults: a.faults - b.faults) }
}

/// One timed phase: wall time and CPU time.
struct Phase {
    var wall: Duration
    var cpu: CPUTimes
    var rate: Double { Double(count) / seconds(wall) }

    /// Each phase gets a broker process of its own (same port, same config): a stock
    /// mosquitto's cost per publish depends on its allocation history (see the top).
    static func measure(_ label: String, _ body: () async throws -> Void) async throws -> Phase {
        mqttBroker.stop()
        try mqttBroker.start()
        mark("\(label) start")
        let cpu = CPUTimes.now(), start = ContinuousClock.now
        try await body()
        let phase = Phase(wall: ContinuousClock.now - start, cpu: CPUTimes.now() - cpu)
        mark("\(label) end")
        return phase
    }

    func line(_ label: String) -> String {
        String(format: "%@ %8.0f documents/s  (%.2f s, %4.0f MB/s; per document: %3.0f µs CPU here + %3.0f µs broker, %.1f page faults here)",
               label, rate, seconds(wall), rate * averageKB / 1000, cpu.own / Double(count) * 1e6, cpu.broker / Double(count) * 1e6,
               Double(cpu.faults) / Double(count))
    }
}

// MARK: - Bare libmosquitto publishers (same window, awaiting PUBACKs)

/// The payloads a bare publisher sends, in order.
struct PayloadSource: Sendable {
    let payloads: [[UInt8]]
    func payload(_ n: Int) -> [UInt8] { payloads[n] }
}

final class BarePublisher: @unchecked Sendable {
    let credits: DispatchSemaphore
    let done = DispatchSemaphore(value: 0)
    let connected = DispatchSemaphore(value: 0)
    init(window: Int) { credits = DispatchSemaphore(value: window) }

    /// Connects, publishes `count` payloads at QoS 1 with at most `window` unacknowledged,
    /// waits for the last PUBACK and disconnects. Blocking: run it on a thread of its own.
    static func run(_ source: PayloadSource, clientId: String) {
        let state = BarePublisher(window: window)
        let handle = connect(state, clientId: clientId)
        for n in 0..<count {
            state.credits.wait()
            let payload = source.payload(n)
            let topic = "realtime_data/\(clientId)-\(n)"
            _ = payload.withUnsafeBytes { bytes in
                mosquitto_publish_v5(handle, nil, topic, Int32(bytes.count), bytes.baseAddress, 1, false, nil)
            }
        }
        finish(state, handle: handle, published: count)
    }

    /// A connected handle whose PUBACKs return credits to `state`.
    static func connect(_ state: BarePublisher, clientId: String) -> OpaquePointer {
        let handle = mosquitto_new(clientId, true, Unmanaged.passUnretained(state).toOpaque())!
        mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5)
        mosquitto_connect_v5_callback_set(handle) { _, userdata, _, _, _ in
            Unmanaged<BarePublisher>.fromOpaque(userdata!).takeUnretainedValue().connected.signal()
        }
        mosquitto_publish_v5_callback_set(handle) { _, userdata, _, _, _ in
            let state = Unmanaged<BarePublisher>.fromOpaque(userdata!).takeUnretainedValue()
            state.credits.signal()
            state.done.signal()
        }
        mosquitto_connect_bind_v5(handle, "127.0.0.1", Int32(mqttBroker.port), 30, nil, nil)
        mosquitto_loop_start(handle)
        state.connected.wait()
        return handle
    }

    /// Waits for the last PUBACK, disconnects and frees the handle.
    static func finish(_ state: BarePublisher, handle: OpaquePointer, published: Int) {
        for _ in 0..<published { state.done.wait() }
        mosquitto_disconnect(handle)
        mosquitto_loop_stop(handle, false)
        mosquitto_destroy(handle)
    }
}

/// `--store-bound`: the bare publisher fed from the store's outbox instead of memory. One read
/// transaction per 64 rows, each body read with incremental blob I/O into one reused buffer and
/// published at once; rows are not deleted. What reading the bodies back out of SQLite costs a
/// publisher with nothing else to do: the bound for any design with the store as the source.
enum StoreBoundPublisher {
    static func run(databasePath: String, clientId: String) {
        var db: OpaquePointer?
        guard sqlite3_open_v2(databasePath, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else { fatalError("cannot open \(databasePath)") }
        defer { sqlite3_close(db) }
        sqlite3_exec(db, "PRAGMA mmap_size = \(0x7FFF_0000)", nil, nil, nil)
        let state = BarePublisher(window: window)
        let handle = BarePublisher.connect(state, clientId: clientId)
        var select: OpaquePointer?
        sqlite3_prepare_v2(db, """
            SELECT o.seq, d.rowid, length(d.body) FROM outbox o JOIN document d ON d.path = o.documentPath
            WHERE o.seq > ? ORDER BY o.seq LIMIT 64
            """, -1, &select, nil)
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var blob: OpaquePointer?
        var after: Int64 = 0, sent = 0
        while sent < count {
            sqlite3_exec(db, "BEGIN", nil, nil, nil)
            sqlite3_bind_int64(select, 1, after)
            var rows = 0
            while sqlite3_step(select) == SQLITE_ROW {
                rows += 1
                after = sqlite3_column_int64(select, 0)
                let rowid = sqlite3_column_int64(select, 1), length = Int(sqlite3_column_int64(select, 2))
                if blob == nil {
                    sqlite3_blob_open(db, "main", "document", "body", rowid, 0, &blob)
                } else {
                    sqlite3_blob_reopen(blob, rowid)
                }
                if buffer.count < length { buffer = [UInt8](repeating: 0, count: length) }
                state.credits.wait()
                buffer.withUnsafeMutableBytes { bytes in
                    _ = sqlite3_blob_read(blob, bytes.baseAddress, Int32(length), 0)
                    _ = mosquitto_publish_v5(handle, nil, "realtime_data/\(clientId)-\(sent)", Int32(length), bytes.baseAddress, 1, false, nil)
                }
                sent += 1
            }
            sqlite3_reset(select)
            sqlite3_blob_close(blob)
            blob = nil
            sqlite3_exec(db, "COMMIT", nil, nil, nil)
            if rows == 0 { break }
        }
        sqlite3_finalize(select)
        BarePublisher.finish(state, handle: handle, published: sent)
    }
}

func onThread(_ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
        Thread { body(); finished.resume() }.start()
    }
}

// MARK: - Rounds

_ = mosquitto_lib_init()
let configuration = {
    var configuration = PublisherConfiguration(host: "127.0.0.1", port: mqttBroker.port, clientId: "bench-publisher", gatewayId: "bench")
    configuration.inFlightWindow = window
    return configuration
}()
let memorySource = PayloadSource(payloads: documents.map(\.body))

/// Reads the store file once, so that the drain reads its backlog from memory, as the baseline
/// does. Why: the fill takes 20-25 s, and on this VM the kernel's DAMON reclaim pages out file
/// pages that stayed unread for ~30 s (`/sys/kernel/mm/damon`); the drain then waited on the
/// disk (`vmstat`: 216 MB read, 44 % idle), which measures the disk, not the publisher.
/// `--cold-store` skips this.
func warmStore(_ path: String) -> (bytes: Int, duration: Duration) {
    let start = ContinuousClock.now
    guard let file = FileHandle(forReadingAtPath: path) else { return (0, .zero) }
    defer { try? file.close() }
    var bytes = 0
    while let block = try? file.read(upToCount: 1 << 20), !block.isEmpty { bytes += block.count }
    return (bytes, ContinuousClock.now - start)
}

/// The drain, preceded with `--store-bound` by the store-fed bare publisher on the same outbox.
func drainPhase() async throws -> (Phase, Phase?) {
    var storeBoundPhase: Phase?
    let fillStart = ContinuousClock.now
    try await fillOutbox()
    print("  filled the outbox in \(ContinuousClock.now - fillStart)")
    let path = (directory.path as NSString).appendingPathComponent(GyroStore.fileName)
    func warm() {
        guard !coldStore else { return }
        let (bytes, duration) = warmStore(path)
        print(String(format: "  read the store file (%.0f MB) into the page cache in %@", Double(bytes) / 1e6, "\(duration)"))
    }
    if storeBound {
        warm()
        storeBoundPhase = try await Phase.measure("store-bound") { await onThread { StoreBoundPublisher.run(databasePath: path, clientId: "bench-store") } }
    }
    warm()
    let publisher = MQTTPublisher(store: store, configuration: configuration, logger: logger)
    var running: Task<Void, Never>?
    let phase = try await Phase.measure("publisher") {
        running = Task { await publisher.run() }
        await publisher.waitUntilIdle()
    }
    let status = await publisher.status
    publisher.shutdown()
    await running?.value
    if status.acknowledged != count { print("  warning: the publisher acknowledged \(status.acknowledged) of \(count)") }
    return (phase, storeBoundPhase)
}

func baselinePhase() async throws -> Phase {
    try await Phase.measure("baseline") { await onThread { BarePublisher.run(memorySource, clientId: "bench-baseline") } }
}

var ratios: [Double] = []
for round in 1...rounds {
    print("round \(round):")
    let drain: Phase, baseline: Phase, storeBoundPhase: Phase?
    if round % 2 == 1 {
        (drain, storeBoundPhase) = try await drainPhase()
        baseline = try await baselinePhase()
    } else {
        baseline = try await baselinePhase()
        (drain, storeBoundPhase) = try await drainPhase()
    }
    print(drain.line("  publisher (outbox, QoS 1, delete on PUBACK):"))
    print(baseline.line("  baseline (bare libmosquitto, in memory):    "))
    if let bound = storeBoundPhase {
        print(bound.line("  bare libmosquitto fed from the store:       "))
        print(String(format: "  ratio store-fed bare / baseline: %.2f; publisher / store-fed bare: %.2f", bound.rate / baseline.rate, drain.rate / bound.rate))
    }
    ratios.append(drain.rate / baseline.rate)
    print(String(format: "  ratio publisher / baseline: %.2f", ratios.last!))
}
let sorted = ratios.sorted()
print(String(format: "median ratio publisher / baseline over %d rounds: %.2f (rounds: %@; target >= 0.8)",
             rounds, sorted[sorted.count / 2], ratios.map { String(format: "%.2f", $0) }.joined(separator: ", ")))
mqttBroker.stop()
directory.remove()
