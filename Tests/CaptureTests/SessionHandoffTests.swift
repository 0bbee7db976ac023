import Capture
import CaptureValues
import Foundation
import GyroStore
import TestSupport
import XCTest

/// A session released by one gateway's engine and adopted by another's, each on its own store:
/// the same records document goes on, its chunk lists whole in the second store, the samples in
/// between a gap; a hand-off that waited too long is closed instead; a bad document is refused.
final class SessionHandoffTests: XCTestCase {
    let sensor = SensorIdentity(device: "C4:BE:84:00:00:0B", userId: "user-11")
    let t0 = Date().timeIntervalSince1970 * 1000 - 60_000

    func makeEngine(_ store: GyroStore) -> CaptureEngine {
        CaptureEngine(store: store, rules: CaptureRules(chunkSize: 10, commitInterval: .seconds(60)),
                      calendar: PeriodCalendar(timeZone: .utc), logger: testLogger())
    }

    /// XCTUnwrap takes an autoclosure, which cannot await.
    func some<T>(_ value: T?, file: StaticString = #filePath, line: UInt = #line) throws -> T {
        try XCTUnwrap(value, file: file, line: line)
    }

    /// Two gateways' stores, each in a folder of its own.
    func twoGateways() throws -> ([TemporaryDirectory], GyroStore, GyroStore) {
        let folders = [try TemporaryDirectory(), try TemporaryDirectory()]
        return (folders, try GyroStore.open(directory: folders[0].path, logger: testLogger()),
                try GyroStore.open(directory: folders[1].path, logger: testLogger()))
    }

    func feed(_ engine: CaptureEngine, _ indices: Range<Int64>) async throws {
        try await engine.append(sensor: sensor, stream: .gyro, odrHz: 100, range: 2000, firstIndex: indices.lowerBound,
                                samples: samples(indices), gapReason: .handedOver)
    }

    func testAReleasedSessionGoesOnAtTheNextGatewayAsTheSameRecord() async throws {
        let (folders, storeA, storeB) = try twoGateways()
        defer { folders.forEach { $0.remove() } }
        let (a, b) = (makeEngine(storeA), makeEngine(storeB))
        let started = try await a.startSession(sensor: sensor, atMs: t0)
        try await feed(a, 0..<25)
        let cycle = SessionHandoff.BoardCycle(resetUID: 5, resetTime: t0 / 1000 - 3_600.0125)
        let handoff = try some(try await a.releaseSession(device: sensor.device, gateway: "gw-a", boardCycle: cycle))
        XCTAssertEqual(handoff.session.id, started.id)
        XCTAssertEqual(handoff.boardCycle, cycle, "no clock correction here: the timeline is true time")
        XCTAssertEqual(handoff.session.chunkIds.count, 3, "the open chunk of 5 closed at the release")
        XCTAssertEqual(handoff.streams[.gyro]?.nextIndex, 25)
        XCTAssertEqual(handoff.streams[.gyro]?.lastSeq, 2)
        let openAtA = await a.openSessions()
        XCTAssertTrue(openAtA.isEmpty, "A writes the session no more")
        let rowAtA = try await storeA.session(id: started.id)
        XCTAssertEqual(rowAtA?.isOpen, false)
        XCTAssertNil(rowAtA?.endMs, "released, not ended")
        let recovered = try await makeEngine(storeA).recover()
        XCTAssertTrue(recovered.isEmpty, "a restart of A does not close nor continue a released session")

        // Through its document, as it crosses the broker.
        let carried = try SessionHandoff(parsing: handoff.encoded(), device: sensor.device)
        XCTAssertEqual(carried, handoff)
        let placed = await b.timelineBoardCycle(of: carried)
        XCTAssertEqual(placed, cycle, "B places the board's power cycle where A did")
        try await b.adoptSession(carried)
        try await feed(b, 40..<52)  // 15 samples produced while the board moved
        try await b.stopSession(device: sensor.device)

        let record = try some(try await storeB.session(id: started.id))
        XCTAssertEqual(record.samples, 37)
        XCTAssertEqual(record.expected, 52)
        XCTAssertEqual(record.gaps.map(\.missing), [15])
        XCTAssertEqual(record.gaps.first?.reason, .handedOver)
        XCTAssertEqual(Array(record.chunkIds.prefix(3)), handoff.session.chunkIds, "A's chunks first, then B's")
        XCTAssertEqual(record.chunkIds.count, 5)
        let body = try some(try await storeB.document(try DocumentPaths.record(started.id)))
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        XCTAssertEqual(document["gscope_data"] as? [String], record.chunkIds)
        XCTAssertEqual(document["user_id"] as? String, sensor.userId)
        XCTAssertEqual(document["samples"] as? Int, 37)
        let seqs = try await storeB.chunks(sessionId: started.id).map(\.seq)
        XCTAssertEqual(seqs, [3, 4], "B's chunks go on after A's")
    }

    func testAHandoffBackToTheFirstGatewayListsEveryChunkOnce() async throws {
        let (folders, storeA, storeB) = try twoGateways()
        defer { folders.forEach { $0.remove() } }
        let (a, b) = (makeEngine(storeA), makeEngine(storeB))
        let started = try await a.startSession(sensor: sensor, atMs: t0)
        try await feed(a, 0..<20)
        let first = try some(try await a.releaseSession(device: sensor.device, gateway: "gw-a"))
        try await b.adoptSession(first)
        try await feed(b, 30..<50)
        let second = try some(try await b.releaseSession(device: sensor.device, gateway: "gw-b"))
        try await a.adoptSession(second)
        try await feed(a, 60..<70)
        try await a.stopSession(device: sensor.device)
        let record = try some(try await storeA.session(id: started.id))
        XCTAssertEqual(record.chunkIds.count, 5)
        XCTAssertEqual(Set(record.chunkIds).count, 5, "A's own earlier chunks are listed once, in place")
        XCTAssertEqual(Array(record.chunkIds.prefix(4)), second.session.chunkIds)
        XCTAssertEqual(record.samples, 50)
        XCTAssertEqual(record.expected - record.samples, record.gaps.reduce(0) { $0 + $1.missing })
    }

    func testAHandoffOlderThanTheIdleTimeoutIsClosedNotContinued() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let engine = makeEngine(store)
        var record = SessionRecord(id: "user-11___1795000000", userId: sensor.userId, device: sensor.device, startMs: t0 - 3_600_000,
                                   localDate: "2026-12-02")
        record.samples = 100
        record.expected = 100
        record.lastSampleMs = t0 - 3_500_000
        record.chunkIds = ["c1", "c2"]
        let stale = SessionHandoff(session: record, streams: [.gyro: .init(nextIndex: 100, lastMs: t0 - 3_500_000, lastSeq: 1, odrHz: 100, range: 2000)],
                                   from: "gw-a", atMs: t0 - 3_500_000)
        let expired = await engine.handoffExpired(stale)
        XCTAssertTrue(expired)
        try await engine.closeHandedOver(stale)
        let closed = try some(try await store.session(id: record.id))
        XCTAssertFalse(closed.isOpen)
        XCTAssertEqual(closed.endMs, record.lastSampleMs, "ended at its last sample")
        XCTAssertEqual(closed.chunkIds, ["c1", "c2"])
    }

    /// A gap the releasing gateway could not fill (its link ended during the log's download) lies
    /// in a chunk of its store; the hand-off carries that chunk, and the next gateway's backfill
    /// fills the gap there, with the new chunks listed in place. The releasing gateway fills
    /// nothing of the session any more: another gateway writes it.
    func testAGapTheFirstGatewayLeftIsFilledByTheNext() async throws {
        let (folders, storeA, storeB) = try twoGateways()
        defer { folders.forEach { $0.remove() } }
        let (a, b) = (makeEngine(storeA), makeEngine(storeB))
        let started = try await a.startSession(sensor: sensor, atMs: t0)
        try await feed(a, 0..<25)
        try await a.append(sensor: sensor, stream: .gyro, odrHz: 100, range: 2000, firstIndex: 40, samples: samples(40..<60),
                           gapReason: .disconnected("link lost"))
        let handoff = try some(try await a.releaseSession(device: sensor.device, gateway: "gw-a", carryingGapChunks: true))
        XCTAssertEqual(handoff.carried.map(\.chunk.firstIndex), [20], "the chunk that lists the gap (20..<25, 40..<45), and only it")
        let carried = try SessionHandoff(parsing: handoff.encoded(), device: sensor.device)
        XCTAssertEqual(carried, handoff, "its body crosses the broker unchanged")
        let late = try await a.backfill(device: sensor.device, stream: .gyro, samples: samples(25..<40))
        XCTAssertEqual(late.filled, 0, "A released the session: it writes none of it")

        try await b.adoptSession(carried)
        try await feed(b, 70..<80)  // the board moved: 60..<70 handed over
        let report = try await b.backfill(device: sensor.device, stream: .gyro, samples: samples(25..<40) + samples(60..<70))
        XCTAssertEqual(report.filled, 25)
        XCTAssertEqual(report.gapsClosed, 2)
        try await b.stopSession(device: sensor.device)

        let record = try some(try await storeB.session(id: started.id))
        XCTAssertEqual(record.gaps, [])
        XCTAssertEqual(record.samples, 80)
        XCTAssertEqual(record.expected, 80)
        let carriedId = handoff.carried[0].chunk.id
        let at = try some(record.chunkIds.firstIndex(of: carriedId))
        XCTAssertEqual(Array(record.chunkIds.prefix(at + 1)), Array(handoff.session.chunkIds.prefix(at + 1)),
                       "A's chunks in order up to the one that listed the gap")
        XCTAssertEqual(record.chunkIds.count, handoff.session.chunkIds.count + 2 + 2,
                       "the filled chunks (10 and 5), B's own and the one the handed-over gap filled")
        var points: [Double] = []
        for id in record.chunkIds[at...(at + 2)] {
            let body = try some(try await storeB.document(try DocumentPaths.chunk(id)))
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            XCTAssertEqual((object["gaps"] as? [Any])?.count, 0, "chunk \(id) lists no gap now")
            points += ((object["data"] as? [[String: Any]]) ?? []).compactMap { $0["timestamp"] as? Double }
        }
        XCTAssertEqual(points.sorted().map { $0.rounded() }, samples(20..<45).map { $0.timestampMs.rounded() },
                       "the carried chunk's samples and the filled ones, once (to the millisecond the documents carry)")
        let recordBody = try some(try await storeB.document(try DocumentPaths.record(started.id)))
        let document = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(recordBody)) as? [String: Any])
        XCTAssertEqual(document["gscope_data"] as? [String], record.chunkIds, "the records document lists them as the store does")
    }

    func samples(_ range: Range<Int64>) -> [StoredSample] {
        range.map { StoredSample(timestampMs: t0 + Double($0) * 10, x: Float($0 % 300), y: 1, z: -1) }
    }

    func testABadHandoffDocumentIsRefusedWithItsReason() {
        let cases: [(String, String)] = [
            ("[]", "not a JSON object"),
            (#"{"session":"s","userId":"u","device":"C4:BE:84:00:00:0C","startMs":1,"localDate":"d","samples":1,"expected":1,"gscope_data":[],"accel_data":[],"from":"g","atMs":1}"#,
             "names device"),
            (#"{"session":"s","userId":"u","device":"C4:BE:84:00:00:0B","startMs":1,"localDate":"d","samples":5,"expected":1,"gscope_data":[],"accel_data":[],"from":"g","atMs":1}"#,
             "expects fewer samples"),
            (#"{"session":"s","userId":"u","device":"C4:BE:84:00:00:0B","startMs":1,"localDate":"d","samples":1,"expected":1,"gscope_data":["a,b"],"accel_data":[],"from":"g","atMs":1}"#,
             "not a chunk id"),
            (#"{"session":"s","userId":"u","device":"C4:BE:84:00:00:0B","startMs":1,"localDate":"d","samples":1,"expected":1,"gscope_data":[],"accel_data":[],"streams":{"gyro":{"nextIndex":-1}},"from":"g","atMs":1}"#,
             "stream \"gyro\""),
            (#"{"session":"s","userId":"u","device":"C4:BE:84:00:00:0B","startMs":1,"localDate":"d","samples":1,"expected":1,"gscope_data":[],"accel_data":[],"from":"g","atMs":1,"boardCycle":{"resetUID":300,"resetTime":1}}"#,
             "\"boardCycle\" lacks"),
            (#"{"session":"s","userId":"u","device":"C4:BE:84:00:00:0B","startMs":1,"localDate":"d","samples":1,"expected":1,"gscope_data":[],"accel_data":[],"from":"g","atMs":1,"carried":[{"id":"c1","stream":"gyro","body":"%%"}]}"#,
             "carried chunk 0 lacks"),
        ]
        for (text, reason) in cases {
            XCTAssertThrowsError(try SessionHandoff(parsing: Array(text.utf8), device: sensor.device), text) { error in
                XCTAssertTrue("\(error)".contains(reason), "\(error) should say \(reason)")
                XCTAssertTrue("\(error)".contains(sensor.device), "\(error) should name the sensor")
            }
        }
    }
}
