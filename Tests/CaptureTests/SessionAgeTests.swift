import Capture
import Foundation
import GyroStore
import TestSupport
import XCTest

/// What a session costs the store does not grow with its age: its row holds no chunk list (the
/// chunk table does), and its records document is rewritten at a pace that slows as it grows.
final class SessionAgeTests: XCTestCase {
    let sensor = SensorIdentity(device: "C4:BE:84:00:00:0A", userId: "user-10")
    let t0 = 1_795_000_000_000.0

    func makeEngine(_ store: GyroStore, rules: (inout CaptureRules) -> Void = { _ in }) -> CaptureEngine {
        var captureRules = CaptureRules(chunkSize: 10, commitInterval: .seconds(60))
        rules(&captureRules)
        return CaptureEngine(store: store, rules: captureRules, calendar: PeriodCalendar(timeZone: .utc), logger: testLogger())
    }

    func feed(_ engine: CaptureEngine, _ indices: Range<Int64>) async throws {
        let samples = indices.map { StoredSample(timestampMs: t0 + Double($0) * 10, x: Float($0 % 300), y: 1, z: -1) }
        try await engine.append(sensor: sensor, stream: .gyro, odrHz: 100, range: 2000, firstIndex: indices.lowerBound, samples: samples)
    }

    /// WAL pages written by a commit that closes ten chunks of 10, early in a session and after
    /// 2,000 chunks: the same, give or take a b-tree page (the records document is held back by
    /// its pace here, which the other tests cover).
    func testClosingChunksCostsTheSameLateInASessionAsEarly() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let engine = makeEngine(store) { $0.documentInterval = .seconds(3600) }
        let session = try await engine.startSession(sensor: sensor, atMs: t0)
        let wal = folder.file(GyroStore.fileName) + "-wal"
        func pagesOfACommit(at index: Int64) async throws -> Int {
            try await feed(engine, index..<index + 100)
            let before = try walFrames(wal).count
            try await engine.flush()
            let after = try walFrames(wal).count
            // A checkpoint in between restarts the WAL; measure the next commit instead.
            return after >= before ? after - before : try await pagesOfACommit(at: index + 100)
        }
        try await feed(engine, 0..<100)
        try await engine.flush()
        let early = try await pagesOfACommit(at: 100)
        var index: Int64 = 200
        while index < 20_000 {
            try await feed(engine, index..<index + 1000)
            try await engine.flush()
            index += 1000
        }
        let late = try await pagesOfACommit(at: index)
        XCTAssertLessThanOrEqual(late, early + 3, "pages of a commit closing 10 chunks: \(early) early, \(late) after 2,000 chunks")

        let stored = try await store.session(id: session.id)
        let open = await engine.openSessions()
        let live = try XCTUnwrap(open.first)
        XCTAssertEqual(live.chunkIds.count, Int(index / 10) + 10)
        XCTAssertEqual(stored?.chunkIds, live.chunkIds, "the lists, read from the chunk table in the order capture closed them")
        let listed = try await store.sessions(chunkLists: false)
        XCTAssertEqual(listed.first?.chunkCount, live.chunkIds.count)
        XCTAssertEqual(listed.first?.chunkIds, [], "a listing reads no chunk rows")
    }

    /// With no pace, the record lists each chunk at the commit after it closes; with the default
    /// pace, a record written less than its interval ago waits, and the session's end writes it
    /// in full at once.
    func testTheRecordFollowsItsPace() async throws {
        let store = try GyroStore.inMemory(logger: testLogger())
        let unpaced = makeEngine(store) { $0.documentInterval = .zero; $0.documentBytesPerSecond = .max }
        let session = try await unpaced.startSession(sensor: sensor, atMs: t0)
        try await feed(unpaced, 0..<35)
        try await unpaced.flush()
        var record = try jsonObject(try await store.document(try DocumentPath("records/\(session.id)")))
        XCTAssertEqual((record["gscope_data"] as? [String])?.count, 3)

        let paced = makeEngine(try GyroStore.inMemory(logger: testLogger()))
        let other = try await paced.startSession(sensor: sensor, atMs: t0)
        try await feed(paced, 0..<35)
        try await paced.flush()
        let store2 = paced.store
        record = try jsonObject(try await store2.document(try DocumentPath("records/\(other.id)")))
        XCTAssertEqual((record["gscope_data"] as? [String])?.count, 0, "written at the start, due again 5 s later")
        _ = try await paced.stopSession(device: sensor.device)
        record = try jsonObject(try await store2.document(try DocumentPath("records/\(other.id)")))
        XCTAssertEqual((record["gscope_data"] as? [String])?.count, 4, "the end writes it at once, every chunk listed")
    }

    func testThePaceSlowsAsTheRecordGrows() {
        let rules = CaptureRules()
        XCTAssertEqual(rules.documentPace(bytes: 0), .seconds(5))
        XCTAssertEqual(rules.documentPace(bytes: 10_240), .seconds(5))
        XCTAssertEqual(rules.documentPace(bytes: 112_640), .seconds(55), "a 4-hour session's record at 400 Hz: a rewrite a minute")
    }
}
