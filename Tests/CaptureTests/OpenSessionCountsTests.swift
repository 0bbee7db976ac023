import Capture
import Foundation
import GyroStore
import TestSupport
import XCTest

/// An open session's row is written when it changes shape (a chunk closes, a gap), not at every
/// commit: a commit that only appends samples writes its ring slot alone, and the store counts an open
/// session from its chunks.
final class OpenSessionCountsTests: XCTestCase {
    let sensor = SensorIdentity(device: "C4:BE:84:00:00:07", userId: "user-7")
    let t0 = 1_795_000_000_000.0

    func makeEngine(_ store: GyroStore, chunkSize: Int) -> CaptureEngine {
        CaptureEngine(store: store, rules: CaptureRules(chunkSize: chunkSize, commitInterval: .seconds(60)),
                      calendar: PeriodCalendar(timeZone: .utc), logger: testLogger())
    }

    func feed(_ engine: CaptureEngine, _ indices: Range<Int64>) async throws {
        let samples = indices.map { StoredSample(timestampMs: t0 + Double($0) * 10, x: Float($0 % 300), y: 1, z: -1) }
        try await engine.append(sensor: sensor, stream: .gyro, odrHz: 100, range: 2000, firstIndex: indices.lowerBound, samples: samples)
    }

    func testACommitThatOnlyAppendsSamplesWritesOneRingSlot() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let engine = makeEngine(store, chunkSize: 1000)
        _ = try await engine.startSession(sensor: sensor, atMs: t0)
        try await feed(engine, 0..<100)
        try await engine.flush()
        let wal = folder.file(GyroStore.fileName) + "-wal"
        for second in 1..<6 {
            let before = try walFrames(wal).count
            try await feed(engine, Int64(second * 100)..<Int64(second * 100 + 100))
            try await engine.flush()
            let frames = try walFrames(wal).dropFirst(before)
            // One ring slot: 4,000 bytes in the 1 KiB pages of a new store.
            XCTAssertLessThanOrEqual(frames.count, 4, "second \(second): pages \(frames.map(\.page))")
            XCTAssertFalse(frames.contains { $0.page == 1 }, "not the database header")
        }
    }

    func testTheStoreCountsAnOpenSessionFromItsChunks() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let engine = makeEngine(store, chunkSize: 500)
        let session = try await engine.startSession(sensor: sensor, atMs: t0)
        try await feed(engine, 0..<700)  // one chunk closed, 200 samples in the next
        try await feed(engine, 740..<900)  // a gap of 40
        try await engine.flush()
        try await feed(engine, 900..<950)
        try await engine.flush()

        let liveSessions = await engine.openSessions()
        let storedSessions = try await store.openSessions()
        let live = try XCTUnwrap(liveSessions.first)
        let stored = try XCTUnwrap(storedSessions.first)
        XCTAssertEqual(live.samples, 910)
        XCTAssertEqual(live.expected, 950)
        XCTAssertEqual(stored.samples, live.samples, "counted from the closed chunk and the open chunk's samples")
        XCTAssertEqual(stored.expected, live.expected)
        XCTAssertEqual(stored.lastSampleMs, t0 + 949 * 10)
        let read = try await store.session(id: session.id)
        XCTAssertEqual(read?.samples, 910, "every read of an open session counts it the same way")

        // The next run closes it with those counts.
        let reopened = try GyroStore.open(directory: folder.path, logger: testLogger())
        let recovered = try await makeEngine(reopened, chunkSize: 500).recover()
        let closed = try XCTUnwrap(recovered.first)
        XCTAssertEqual(closed.samples, 910)
        XCTAssertEqual(closed.expected, 950)
        XCTAssertEqual(closed.endMs, t0 + 949 * 10)
        let row = try await store.session(id: session.id)
        XCTAssertEqual(row?.isOpen, false)
        XCTAssertEqual(row?.samples, 910, "a closed session's row holds its counts")
        XCTAssertEqual(row?.expected, 950)
    }
}
