// Benchmark: gyro samples in, chunks committed, through the capture engine into a store on
// disk (WAL, synchronous FULL), against a plain SQLite insert loop of the same document bytes
// (one transaction per 2,000-point chunk, same pragmas) measured in the same run.
//
// usage: swift run -c release store-bench [SAMPLES] [DIRECTORY]
import Capture
import Foundation
import CSQLite
import GyroStore
import Logging

let arguments = CommandLine.arguments
let total = arguments.count > 1 ? Int(arguments[1]) ?? 2_000_000 : 2_000_000
let base = arguments.count > 2 ? arguments[2] : NSTemporaryDirectory()
let folder = (base as NSString).appendingPathComponent("gyrogate-bench-\(UUID().uuidString.prefix(8))")
defer { try? FileManager.default.removeItem(atPath: folder) }
let logger = Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() })
let chunkSize = 2000, batch = 100

// Samples as a 50 Hz sensor would hand them over, prepared before timing.
let t0 = 1_795_000_000_000.0
func syntheticSample(_ i: Int) -> StoredSample {
    let x = Float(i % 4000) * 0.061, y = Float(i % 3000) * -0.061, z = Float(i % 7) * 12.2
    return StoredSample(timestampMs: t0 + Double(i) * 20, x: x, y: y, z: z)
}
let batches: [[StoredSample]] = stride(from: 0, to: total, by: batch).map { first in
    (first..<min(first + batch, total)).map(syntheticSample)
}

func measure(_ body: () async throws -> Void) async rethrows -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    try await body()
    return clock.now - start
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

// 1. gyrogate: capture engine → store.
let store = try GyroStore.open(directory: folder + "/ours", logger: logger)
let engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: chunkSize), calendar: PeriodCalendar(timeZone: .utc), logger: logger)
let sensor = SensorIdentity(device: "C4:BE:84:00:00:01", userId: "bench")
let ours = try await measure {
    // The engine's committer runs beside the producer, as in the daemon. The producer runs on
    // the store writer's thread, where the daemon's samples reach the engine (its committer takes
    // them from the feed there): a producer on another thread would add two thread switches per
    // batch that the daemon does not make.
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await engine.run() }
        try await Task(executorPreference: store.writerExecutor) {
            _ = try await engine.startSession(sensor: sensor, atMs: t0)
            var index: Int64 = 0
            for samples in batches {
                try await engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: index, samples: samples)
                index += Int64(samples.count)
            }
            _ = try await engine.stopSession(device: sensor.device)
        }.value
        group.cancelAll()
    }
}
let committed = await engine.counters.committedSamples
let storedSessions = try await store.sessions()
let storedSamples = storedSessions.reduce(0) { $0 + $1.samples }
var chunkPoints = 0
for session in storedSessions { for chunk in try await store.chunks(sessionId: session.id) { chunkPoints += chunk.count } }
guard committed == total, storedSamples == Int64(total), chunkPoints == total else {
    fatalError("committed \(committed) of \(total) samples; sessions say \(storedSamples), chunks \(chunkPoints), \(storedSessions.count) sessions")
}

// 2. Baseline: the same chunk document bytes, inserted with the C API, one transaction each.
let ids = try await store.documentIds(inCollection: "realtime_data")
var bodies: [[UInt8]] = []
for id in ids { bodies.append(try await store.document(try DocumentPath("realtime_data/\(id)")) ?? []) }
let documentBytes = bodies.reduce(0) { $0 + $1.count }

/// Inserts each body in its own transaction with the C API; returns the time taken.
func plainInsertLoop(_ bodies: [[UInt8]], ids: [String], path: String) async -> Duration {
    var db: OpaquePointer?
    guard sqlite3_open(path, &db) == SQLITE_OK else { fatalError("cannot open the baseline database") }
    func exec(_ sql: String) { guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { fatalError(String(cString: sqlite3_errmsg(db))) } }
    exec("PRAGMA journal_mode = WAL")
    exec("PRAGMA synchronous = FULL")
    exec("CREATE TABLE document (path TEXT PRIMARY KEY, body BLOB NOT NULL)")
    var insert: OpaquePointer?
    sqlite3_prepare_v2(db, "INSERT INTO document (path, body) VALUES (?, ?)", -1, &insert, nil)
    let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    let elapsed = await measure {
        for (index, body) in bodies.enumerated() {
            exec("BEGIN")
            sqlite3_bind_text(insert, 1, "realtime_data/\(ids[index])", -1, transient)
            _ = body.withUnsafeBytes { sqlite3_bind_blob(insert, 2, $0.baseAddress, Int32($0.count), transient) }
            guard sqlite3_step(insert) == SQLITE_DONE else { fatalError(String(cString: sqlite3_errmsg(db))) }
            sqlite3_reset(insert)
            exec("COMMIT")
        }
    }
    sqlite3_finalize(insert)
    sqlite3_close(db)
    return elapsed
}
try FileManager.default.createDirectory(atPath: folder + "/plain", withIntermediateDirectories: true)
let plain = await plainInsertLoop(bodies, ids: ids, path: folder + "/plain/plain.sqlite")

let oursRate = Double(total) / seconds(ours)
let plainRate = Double(total) / seconds(plain)
print("store-bench: \(total) gyro samples, \(ids.count) chunks of \(chunkSize), \(documentBytes / 1_000_000) MB of chunk documents, store in \(base)")
print(String(format: "  gyrogate capture → store:     %8.3f s  %12.0f samples/s", seconds(ours), oursRate))
print(String(format: "  plain SQLite insert baseline: %8.3f s  %12.0f samples/s", seconds(plain), plainRate))
print(String(format: "  ratio gyrogate / baseline:    %8.2f   (target: ≥ 1,000,000 samples/s → %@)", oursRate / plainRate,
             oursRate >= 1_000_000 ? "met" : "NOT met"))

// Where the time goes: rendering the chunk documents alone.
let renderer = DocumentRenderer()
let sampleSession = SessionRecord(id: "bench___1", userId: "bench", device: sensor.device, startMs: t0, localDate: "2026-11-18")
var chunkRecord = ChunkRecord(id: "c", sessionId: "bench___1", stream: "gyro", seq: 0, odrHz: 50, range: 2000, firstIndex: 0)
chunkRecord.isOpen = false
let chunkSamples = Array(batches.joined().prefix(chunkSize))
var renderedBytes = 0
let rendering = await measure {
    for _ in 0..<(total / chunkSize) { renderedBytes += ChunkBody.json(renderer.chunk(chunkRecord, session: sampleSession, samples: chunkSamples[...]))?.count ?? 0 }
}
print(String(format: "  of which rendering JSON:      %8.3f s  %12.0f samples/s (%d bytes)", seconds(rendering), Double(total) / seconds(rendering), renderedBytes))
