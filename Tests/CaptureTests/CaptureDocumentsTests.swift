import Capture
import Foundation
import GyroStore
import TestSupport
import XCTest
import ZoneInfo

final class CaptureDocumentsTests: XCTestCase {
    let sensor = SensorIdentity(device: "C4:BE:84:00:00:01", userId: "user-1")
    let t0 = 1_795_000_000_000.0

    func makeEngine(_ store: GyroStore, chunkSize: Int = 2000, location: (Double, Double)? = nil, now: @escaping @Sendable () -> Double = { 0 },
                    rules: (inout CaptureRules) -> Void = { _ in }) -> CaptureEngine {
        var captureRules = CaptureRules(chunkSize: chunkSize, commitInterval: .seconds(60))
        rules(&captureRules)
        return CaptureEngine(store: store, rules: captureRules, calendar: PeriodCalendar(timeZone: try! Zone.named("Europe/London")),
                             renderer: DocumentRenderer(location: location.map { (latitude: $0.0, longitude: $0.1) }), logger: testLogger(), now: now)
    }

    func samples(_ range: Range<Int64>, t0: Double? = nil) -> [StoredSample] {
        let start = t0 ?? self.t0
        return range.map { StoredSample(timestampMs: start + Double($0) * 20, x: Float($0) / 4, y: -Float($0), z: 1.5) }
    }

    func feed(_ engine: CaptureEngine, _ range: Range<Int64>, batch: Int64 = 3) async throws {
        var index = range.lowerBound
        while index < range.upperBound {
            let end = min(index + batch, range.upperBound)
            try await engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: index, samples: samples(index..<end))
            index = end
        }
    }

    func document(_ store: GyroStore, _ path: String) async throws -> [String: Any] {
        try jsonObject(try await store.document(try DocumentPath(path)))
    }

    func testSamplesBecomeTheAppsDocuments() async throws {
        let store = try GyroStore.inMemory(logger: testLogger())
        let engine = makeEngine(store)
        let session = try await engine.startSession(sensor: sensor, atMs: t0)
        XCTAssertEqual(session.id, "user-1___1795000000")
        try await feed(engine, 0..<4500)

        var record = try await document(store, "records/\(session.id)")
        XCTAssertTrue(record["timestamp"] is NSNull, "not submitted while open")
        XCTAssertEqual((record["gscope_data"] as? [String])?.count, 0,
                       "two full chunks so far, but the record is rewritten for them at its pace (5 s), not at every close")

        let closed = try await engine.stopSession(device: sensor.device)
        record = try await document(store, "records/\(session.id)")
        let chunkIds = try XCTUnwrap(record["gscope_data"] as? [String])
        XCTAssertEqual(chunkIds, closed.chunkIds)
        XCTAssertEqual(chunkIds.count, 3)
        XCTAssertEqual(record["user_id"] as? String, "user-1")
        XCTAssertEqual(record["device"] as? String, sensor.device)
        XCTAssertEqual(record["samples"] as? Int, 4500)
        XCTAssertEqual(record["timestamp"] as? Int, Int((t0 + 4499 * 20) / 1000))
        XCTAssertEqual(record["hazards"] as? [String: Int], [:])
        XCTAssertEqual((record["gaps"] as? [Any])?.count, 0)

        var all: [[String: Any]] = []
        for (seq, id) in chunkIds.enumerated() {
            let chunk = try await document(store, "realtime_data/\(id)")
            XCTAssertEqual(chunk["seq"] as? Int, seq)
            XCTAssertEqual(chunk["record"] as? String, session.id)
            XCTAssertEqual(chunk["sensor"] as? String, "gyro")
            XCTAssertEqual(chunk["odr_hz"] as? Int, 50)
            XCTAssertEqual(chunk["range_dps"] as? Int, 2000)
            all += try XCTUnwrap(chunk["data"] as? [[String: Any]])
        }
        XCTAssertEqual(all.count, 4500)
        for (index, point) in all.enumerated() where index % 97 == 0 || index == 4499 {
            XCTAssertEqual(point["timestamp"] as? Double, t0 + Double(index) * 20)
            XCTAssertEqual(try XCTUnwrap(point["gx"] as? Double), Double(index) / 4, accuracy: 1e-5)
            XCTAssertEqual(try XCTUnwrap(point["gy"] as? Double), -Double(index), accuracy: 1e-5)
            XCTAssertEqual(point["gz"] as? Double, 1.5)
            XCTAssertNil(point["lat"])
        }

        let daily = try await document(store, "TitanUpUsers/user-1/DailySessions/\(session.id)")
        XCTAssertEqual(daily["date"] as? String, "2026-11-18")
        XCTAssertEqual(daily["samples"] as? Int, 4500)
        XCTAssertEqual(daily["chunks"] as? Int, 3)
        XCTAssertEqual(try XCTUnwrap(daily["duration"] as? Double), 89.98, accuracy: 1e-6)
        XCTAssertEqual(daily["record"] as? String, session.id)
        let medals = try await document(store, "TitanUpUsers/user-1/MedalsAndTrophies/current")
        XCTAssertEqual(medals["firstSession"] as? Bool, true)
        XCTAssertEqual(medals["tenSessions"] as? Bool, false)
    }

    func testGapsAreRecordedWithTheirMissingCountAndDuplicatesAreDropped() async throws {
        let store = try GyroStore.inMemory(logger: testLogger())
        let engine = makeEngine(store, chunkSize: 100)
        let session = try await engine.startSession(sensor: sensor, atMs: t0)
        try await feed(engine, 0..<50)
        try await feed(engine, 40..<60)  // 40..<50 again
        try await feed(engine, 75..<130)  // 60...74 missing
        let closed = try await engine.stopSession(device: sensor.device)
        XCTAssertEqual(closed.samples, 50 + 10 + 55)
        XCTAssertEqual(closed.expected, 130)
        XCTAssertEqual(closed.gaps.count, 1)
        let gap = try XCTUnwrap(closed.gaps.first)
        XCTAssertEqual(gap.missing, 15)
        XCTAssertEqual(gap.fromIndex, 60)
        XCTAssertEqual(gap.toIndex, 74)
        XCTAssertEqual(gap.fromMs, t0 + 60 * 20)
        XCTAssertEqual(gap.toMs, t0 + 74 * 20)
        let counters = await engine.counters
        XCTAssertEqual(counters.duplicateSamples, 10)
        XCTAssertEqual(counters.missingSamples, 15)
        XCTAssertEqual(counters.gaps, 1)

        let record = try await document(store, "records/\(session.id)")
        let gaps = try XCTUnwrap(record["gaps"] as? [[String: Any]])
        XCTAssertEqual(gaps.first?["missing"] as? Int, 15)
        let first = try await document(store, "realtime_data/\(closed.chunkIds[0])")
        XCTAssertEqual((first["gaps"] as? [[String: Any]])?.first?["from_index"] as? Int, 60, "the chunk that holds the gap says so")
        let stamps = (first["data"] as? [[String: Any]])?.compactMap { $0["timestamp"] as? Double } ?? []
        XCTAssertEqual(stamps, stamps.sorted())
        XCTAssertEqual(Set(stamps).count, stamps.count, "no duplicated sample")
    }

    func testLocationAndAccelerometerChunks() async throws {
        let store = try GyroStore.inMemory(logger: testLogger())
        let engine = makeEngine(store, chunkSize: 10, location: (51.5072, -0.1276))
        _ = try await engine.startSession(sensor: sensor, atMs: t0)
        try await engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 500, firstIndex: 0, samples: samples(0..<4))
        try await engine.append(sensor: sensor, stream: .accelerometer, odrHz: 25, range: 4, firstIndex: 0, samples: samples(0..<3))
        let closed = try await engine.stopSession(device: sensor.device)
        XCTAssertEqual(closed.chunkIds.count, 1)
        XCTAssertEqual(closed.accelChunkIds.count, 1)
        let gyro = try await document(store, "realtime_data/\(closed.chunkIds[0])")
        let point = try XCTUnwrap((gyro["data"] as? [[String: Any]])?.first)
        XCTAssertEqual(point["lat"] as? Double, 51.5072)
        XCTAssertEqual(point["lon"] as? Double, -0.1276)
        XCTAssertEqual(gyro["range_dps"] as? Int, 500)
        let accel = try await document(store, "realtime_data/\(closed.accelChunkIds[0])")
        XCTAssertEqual(accel["sensor"] as? String, "accelerometer")
        XCTAssertEqual(accel["range_g"] as? Int, 4)
        XCTAssertNotNil((accel["data"] as? [[String: Any]])?.first?["ax"])
    }

    func testHazardsMergeAndDeleteRemovesDocuments() async throws {
        let store = try GyroStore.inMemory(logger: testLogger())
        let engine = makeEngine(store, chunkSize: 10)
        let session = try await engine.startSession(sensor: sensor, atMs: t0)
        try await feed(engine, 0..<25)
        _ = try await engine.mergeHazards(sessionId: session.id, ["pothole": 2])
        let closed = try await engine.stopSession(device: sensor.device)
        _ = try await engine.mergeHazards(sessionId: session.id, ["pothole": 3, "ice": 1])
        var record = try await document(store, "records/\(session.id)")
        XCTAssertEqual(record["hazards"] as? [String: Int], ["pothole": 3, "ice": 1])
        record = try await document(store, "TitanUpUsers/user-1/DailySessions/\(session.id)")
        XCTAssertEqual(record["hazards"] as? [String: Int], ["pothole": 3, "ice": 1])

        try await engine.deleteSession(id: session.id)
        let gone = try await store.document(try DocumentPath("records/\(session.id)"))
        XCTAssertNil(gone)
        for id in closed.chunkIds {
            let chunk = try await store.document(try DocumentPath("realtime_data/\(id)"))
            XCTAssertNil(chunk)
        }
        let outbox = try await store.pendingOutbox(after: 0, limit: 100)
        let deletes = outbox.filter { $0.payload.isEmpty }
        XCTAssertEqual(Set(deletes.map(\.topic)), Set(["records/\(session.id)", "TitanUpUsers/user-1/DailySessions/\(session.id)"] + closed.chunkIds.map { "realtime_data/\($0)" }))
        XCTAssertTrue(deletes.allSatisfy(\.retain))
        let medals = try await document(store, "TitanUpUsers/user-1/MedalsAndTrophies/current")
        XCTAssertEqual(medals["firstSession"] as? Bool, true, "medals stay earned")
    }

    func testASessionThatStoredNoSampleIsWithdrawnWhenItCloses() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let crashed = makeEngine(store)
        let session = try await crashed.startSession(sensor: sensor, atMs: t0)
        let published = try await store.document(try DocumentPath("records/\(session.id)"))
        XCTAssertNotNil(published, "an open session is published at its start")

        // The next run finds it open (a crash before any sample was stored) and closes it.
        let engine = makeEngine(store)
        let recovered = try await engine.recover()
        XCTAssertEqual(recovered.map(\.id), [session.id])
        let row = try await store.session(id: session.id)
        XCTAssertNil(row, "no empty session is kept")
        for path in ["records/\(session.id)", "TitanUpUsers/user-1/DailySessions/\(session.id)"] {
            let document = try await store.document(try DocumentPath(path))
            XCTAssertNil(document, path)
        }
        let outbox = try await store.pendingOutbox(after: 0, limit: 100)
        let withdrawn = outbox.filter { $0.payload.isEmpty }.map(\.topic)
        XCTAssertEqual(Set(withdrawn), ["records/\(session.id)", "TitanUpUsers/user-1/DailySessions/\(session.id)"],
                       "subscribers see the empty session's documents cleared")
        let counters = await engine.counters
        XCTAssertEqual(counters.sessionsWithdrawn, 1)
        let medals = try await store.document(try DocumentPath("TitanUpUsers/user-1/MedalsAndTrophies/current"))
        XCTAssertNil(medals, "an empty session earns nothing")
    }

    func testASessionLeftOpenByACrashIsClosedAtItsLastStoredSample() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let crashed = makeEngine(store, chunkSize: 100)
        let session = try await crashed.startSession(sensor: sensor, atMs: t0)
        try await feed(crashed, 0..<250)
        try await crashed.flush()
        try await feed(crashed, 250..<260)  // never committed: lost with the crash

        let reopened = try GyroStore.open(directory: folder.path, logger: testLogger())
        let recovered = try await makeEngine(reopened, chunkSize: 100).recover()
        XCTAssertEqual(recovered.map(\.id), [session.id])
        let closed = try XCTUnwrap(recovered.first)
        XCTAssertEqual(closed.endMs, t0 + 249 * 20)
        XCTAssertEqual(closed.chunkIds.count, 3)
        XCTAssertFalse(closed.isOpen)
        let last = try await document(reopened, "realtime_data/\(closed.chunkIds[2])")
        XCTAssertEqual((last["data"] as? [Any])?.count, 50)
        let open = try await reopened.openSessions()
        XCTAssertEqual(open.count, 0)
    }

    func testIdleTimeoutAndMaximumDuration() async throws {
        let store = try GyroStore.inMemory(logger: testLogger())
        let clock = ManualTime(t0)
        let engine = makeEngine(store, chunkSize: 50, now: { clock.value }) { rules in
            rules.idleTimeoutMs = 10_000
            rules.maxDurationMs = 1_000
        }
        try await feed(engine, 0..<120, batch: 10)  // 2.4 s of samples: split into sessions of 1 s
        let sessions = try await store.sessions()
        XCTAssertEqual(sessions.count, 3)
        XCTAssertEqual(sessions.filter(\.isOpen).count, 1)
        clock.value = t0 + 119 * 20 + 10_001
        try await engine.closeIdleSessions()
        let after = try await store.sessions()
        XCTAssertEqual(after.filter(\.isOpen).count, 0)
        XCTAssertEqual(after.reduce(0) { $0 + $1.samples }, 120, "splitting loses nothing")
        XCTAssertEqual(after.reduce(0) { $0 + $1.expected }, 120, "and invents no gap")
    }
}

final class ManualTime: @unchecked Sendable {
    var value: Double
    init(_ value: Double) { self.value = value }
}

/// Found by the store benchmark: with the committer running, samples whose times lie in the
/// past (a log download, a replay) must neither trip the idle timeout nor be dropped.
final class CommitterTests: XCTestCase {
    func testSamplesWithOldTimestampsAreAllKeptWhileTheCommitterRuns() async throws {
        let store = try GyroStore.inMemory(logger: testLogger())
        var rules = CaptureRules(chunkSize: 500, commitInterval: .milliseconds(10))
        rules.idleTimeoutMs = 5_000
        let engine = CaptureEngine(store: store, rules: rules, calendar: PeriodCalendar(timeZone: .utc), logger: testLogger())
        let sensor = SensorIdentity(device: "C4:BE:84:00:00:02", userId: "replay")
        let t0 = 1_600_000_000_000.0
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await engine.run() }
            for first in stride(from: Int64(0), to: 20_000, by: 100) {
                let samples = (first..<first + 100).map { StoredSample(timestampMs: t0 + Double($0) * 20, x: 1, y: 2, z: 3) }
                try await engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: first, samples: samples)
            }
            _ = try await engine.stopSession(device: sensor.device)
            group.cancelAll()
        }
        let sessions = try await store.sessions()
        XCTAssertEqual(sessions.count, 1)
        XCTAssertEqual(sessions.first?.samples, 20_000)
        XCTAssertEqual(sessions.first?.chunkIds.count, 40)
        let committed = await engine.counters.committedSamples
        XCTAssertEqual(committed, 20_000)
    }
}
