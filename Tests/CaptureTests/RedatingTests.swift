import Capture
import Foundation
import GyroStore
import HostTime
import TestSupport
import XCTest
import ZoneInfo

/// A re-dating (`CaptureEngine.redate`) moves every session this run dated, open or closed, to its
/// true time: rows, documents, chunk points, paths and days, in one transaction, and what comes
/// after it is dated right at once.
final class RedatingTests: XCTestCase {
    let sensorA = SensorIdentity(device: "C4:BE:84:00:00:01", userId: "user-1")
    let sensorB = SensorIdentity(device: "C4:BE:84:00:00:02", userId: "user-2")
    /// The true time of the first sample: 2026-11-21 10:00 UTC, and the clock 3 days behind it.
    let trueT0 = 1_795_255_200_000.0
    let behind = 3 * 86_400_000.0

    func makeEngine(_ store: GyroStore, clock: GatewayClock) -> CaptureEngine {
        CaptureEngine(store: store, rules: CaptureRules(chunkSize: 1000, commitInterval: .seconds(60)),
                      calendar: PeriodCalendar(timeZone: try! Zone.named("Europe/London")), logger: testLogger(),
                      now: { clock.timeline() * 1000 }, clock: clock)
    }

    /// A clock that starts 3 days behind, unsynchronised, stopped at `trueT0 - behind`.
    func unsynchronisedClock() -> GatewayClock {
        let wall = (trueT0 - behind) / 1000
        return GatewayClock(kernel: .init(wall: { wall }, monotonic: { 0 }, synchronised: { (false, nil) }))
    }

    func samples(_ range: Range<Int64>, from t0: Double) -> [StoredSample] {
        range.map { StoredSample(timestampMs: t0 + Double($0) * 10, x: Float($0 % 1000) / 8, y: 1, z: -1) }
    }

    func feed(_ engine: CaptureEngine, _ sensor: SensorIdentity, _ range: Range<Int64>, from t0: Double) async throws {
        var index = range.lowerBound
        while index < range.upperBound {
            let end = min(index + 50, range.upperBound)
            try await engine.append(sensor: sensor, stream: .gyro, odrHz: 100, range: 2000, firstIndex: index, samples: samples(index..<end, from: t0))
            index = end
        }
    }

    func document(_ store: GyroStore, _ path: String) async throws -> [String: Any]? {
        guard let body = try await store.document(try DocumentPath(path)) else { return nil }
        return try jsonObject(body)
    }

    func requireDocument(_ store: GyroStore, _ path: String) async throws -> [String: Any] {
        let document = try await document(store, path)
        return try XCTUnwrap(document, "\(path) is missing")
    }

    func testEverySessionOfTheRunMovesToItsTruePathAndItsPointsByTheStep() async throws {
        let store = try GyroStore.inMemory(logger: testLogger())
        let engine = makeEngine(store, clock: unsynchronisedClock())
        let wrongT0 = trueT0 - behind
        // A closed session of user 1 (2,500 samples, a gap of 20 in it) and an open one of user 2.
        try await feed(engine, sensorA, 0..<1200, from: wrongT0)
        try await feed(engine, sensorA, 1220..<2520, from: wrongT0)
        let closedA = try await engine.stopSession(device: sensorA.device)
        try await feed(engine, sensorB, 0..<1500, from: wrongT0)
        let openB = await engine.openSessions()
        let oldB = try XCTUnwrap(openB.first).id
        XCTAssertEqual(closedA.id, "user-1___\(Int64(wrongT0 / 1000))")
        let clockBefore = try await document(store, "records/\(closedA.id)")?["clock"] as? String
        XCTAssertEqual(clockBefore, "unsynchronised")

        try await engine.redate(Redating(delta: behind / 1000, dating: .synchronised, reason: "clock synchronised"))

        // The old paths are gone (zero-byte retained publishes), the true ones hold the sessions.
        let idA = "user-1___\(Int64(trueT0 / 1000))", idB = "user-2___\(Int64(trueT0 / 1000))"
        for old in ["records/\(closedA.id)", "TitanUpUsers/user-1/DailySessions/\(closedA.id)", "records/\(oldB)"] {
            let body = try await document(store, old)
            XCTAssertNil(body, "\(old) is deleted")
        }
        let outbox = try await store.pendingOutbox(after: 0, limit: 10_000)
        XCTAssertTrue(outbox.contains { $0.topic == "records/\(closedA.id)" && $0.payload.isEmpty && $0.retain })
        let recordA = try await requireDocument(store, "records/\(idA)")
        XCTAssertEqual(recordA["start"] as? Double, trueT0)
        XCTAssertEqual(recordA["clock"] as? String, "synchronised")
        XCTAssertEqual(recordA["samples"] as? Int, 2500)
        XCTAssertEqual(recordA["expected"] as? Int, 2520)
        let gap = try XCTUnwrap((recordA["gaps"] as? [[String: Any]])?.first)
        XCTAssertEqual(gap["from"] as? Double, trueT0 + 1200 * 10)
        let daily = try await requireDocument(store, "TitanUpUsers/user-1/DailySessions/\(idA)")
        XCTAssertEqual(daily["date"] as? String, "2026-11-21", "the true day")
        XCTAssertEqual(daily["record"] as? String, idA)

        // Every point of every chunk at its true time, and each chunk names the session's new id.
        var points: [(Double, Double)] = []
        for id in try XCTUnwrap(recordA["gscope_data"] as? [String]) {
            let chunk = try await requireDocument(store, "realtime_data/\(id)")
            XCTAssertEqual(chunk["record"] as? String, idA)
            for point in try XCTUnwrap(chunk["data"] as? [[String: Any]]) {
                points.append((try XCTUnwrap(point["timestamp"] as? Double), try XCTUnwrap(point["gx"] as? Double)))
            }
        }
        let expected = (Array(0..<1200) + Array(1220..<2520)).map { (trueT0 + Double($0) * 10, Double(Float($0 % 1000) / 8)) }
        XCTAssertEqual(points.map(\.0), expected.map(\.0))
        XCTAssertEqual(points.map(\.1), expected.map(\.1))

        // The open session goes on under its true id; what the sensors hand in after the step is
        // on the same timeline as before and is dated right.
        let openIds = await engine.openSessions().map(\.id)
        XCTAssertEqual(openIds, [idB])
        try await feed(engine, sensorB, 1500..<2600, from: wrongT0)
        let closedB = try await engine.stopSession(device: sensorB.device)
        XCTAssertEqual(closedB.id, idB)
        XCTAssertEqual(closedB.samples, 2600)
        XCTAssertEqual(closedB.expected, 2600)
        XCTAssertEqual(closedB.endMs, trueT0 + 2599 * 10)
        var timesB: [Double] = []
        for id in closedB.chunkIds {
            let chunk = try await requireDocument(store, "realtime_data/\(id)")
            XCTAssertEqual(chunk["record"] as? String, idB)
            timesB += try XCTUnwrap(chunk["data"] as? [[String: Any]]).map { try XCTUnwrap($0["timestamp"] as? Double) }
        }
        XCTAssertEqual(timesB, (0..<2600).map { trueT0 + Double($0) * 10 }, "every sample once, at its true time")
        let stored = try await store.sessions()
        XCTAssertEqual(Set(stored.map(\.id)), [idA, idB])
        XCTAssertTrue(stored.allSatisfy { $0.dating == .synchronised })
        let counters = await engine.counters
        XCTAssertEqual(counters.redatings, 1)
    }

    func testAReDatingWithoutAStepOnlyChangesHowTheDocumentsSayTheyAreDated() async throws {
        let store = try GyroStore.inMemory(logger: testLogger())
        let engine = makeEngine(store, clock: unsynchronisedClock())
        try await feed(engine, sensorA, 0..<1100, from: trueT0)
        let sessions = await engine.openSessions()
        let open = try XCTUnwrap(sessions.first)
        let (id, chunkId) = (open.id, try XCTUnwrap(open.chunkIds.first))
        let before = try await store.document(try DocumentPath("realtime_data/\(chunkId)"))
        try await engine.redate(Redating(delta: 0, dating: .synchronised, reason: "clock synchronised"))
        try await engine.flush()
        let clock = try await document(store, "records/\(id)")?["clock"] as? String
        XCTAssertEqual(clock, "synchronised")
        let after = try await store.document(try DocumentPath("realtime_data/\(chunkId)"))
        XCTAssertEqual(after, before, "a chunk is not published again for nothing")
    }

    func testABackwardStepMovesEarlierAndTheMedalsFollowTheTrueDays() async throws {
        let store = try GyroStore.inMemory(logger: testLogger())
        let engine = makeEngine(store, clock: unsynchronisedClock())
        // Three sessions on three days by the wrong clock: a three-day streak, which is false.
        for day in 0..<3 {
            let t0 = trueT0 + Double(day) * 86_400_000
            try await feed(engine, sensorA, 0..<200, from: t0)
            _ = try await engine.stopSession(device: sensorA.device)
        }
        let streak = try await document(store, "TitanUpUsers/user-1/MedalsAndTrophies/current")?["threeDayStreak"] as? Bool
        XCTAssertEqual(streak, true)
        try await engine.redate(Redating(delta: -3600, dating: .synchronised, reason: "clock stepped"))
        let stored = try await store.sessions().sorted { $0.startMs < $1.startMs }
        XCTAssertEqual(stored.map(\.startMs), (0..<3).map { trueT0 + Double($0) * 86_400_000 - 3_600_000 })
        XCTAssertEqual(stored.map(\.id), stored.map { "user-1___\(Int64($0.startMs / 1000))" })
        let streakAfter = try await document(store, "TitanUpUsers/user-1/MedalsAndTrophies/current")?["threeDayStreak"] as? Bool
        XCTAssertEqual(streakAfter, true, "still three consecutive days")
    }
}
