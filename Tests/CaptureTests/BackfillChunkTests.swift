import Capture
import Foundation
import GyroStore
import TestSupport
import XCTest

/// A backfill larger than the room in its gap's chunk becomes new chunks of at most `chunkSize`.
final class BackfillChunkTests: XCTestCase {
    let sensor = SensorIdentity(device: "C4:BE:84:00:00:01", userId: "user-1")
    let t0 = 1_795_000_000_000.0

    func samples(_ range: Range<Int64>) -> [StoredSample] {
        range.map { StoredSample(timestampMs: t0 + Double($0) * 10, x: Float($0), y: 0, z: 1) }
    }

    func testALongOutageBecomesSeveralChunksInTimeOrder() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, maxBytes: 64 << 20, logger: testLogger())
        var rules = CaptureRules(chunkSize: 100, commitInterval: .seconds(60))
        rules.newChunkAtGap = [sensor.device]
        let engine = CaptureEngine(store: store, rules: rules, calendar: PeriodCalendar(timeZone: .utc), logger: testLogger())
        let session = try await engine.startSession(sensor: sensor, atMs: t0)
        try await engine.append(sensor: sensor, stream: .gyro, odrHz: 100, range: 2000, firstIndex: 0, samples: samples(0..<50))
        try await engine.append(sensor: sensor, stream: .gyro, odrHz: 100, range: 2000, firstIndex: 300, samples: samples(300..<350),
                               gapReason: .disconnected("x"))
        let before = try await store.session(id: session.id)
        XCTAssertEqual(before?.gaps.map(\.missing), [250])

        let report = try await engine.backfill(device: sensor.device, stream: .gyro, samples: samples(50..<300))
        XCTAssertEqual(report.filled, 250)
        _ = try await engine.stopSession(device: sensor.device)

        let stored = try await store.session(id: session.id)
        let record = try XCTUnwrap(stored)
        XCTAssertEqual(record.gaps, [])
        XCTAssertEqual(record.samples, 350)
        var times: [Double] = []
        for id in record.chunkIds {
            let document = try await store.document(try DocumentPath("realtime_data/\(id)"))
            let body = try XCTUnwrap(document)
            let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
            let points = try XCTUnwrap(object["data"] as? [[String: Any]])
            XCTAssertLessThanOrEqual(points.count, 100, "chunk \(id)")
            times += points.compactMap { $0["timestamp"] as? Double }
        }
        XCTAssertEqual(times, samples(0..<350).map(\.timestampMs), "every point once, gscope_data in time order")
        XCTAssertGreaterThanOrEqual(record.chunkIds.count, 4)
    }
}
