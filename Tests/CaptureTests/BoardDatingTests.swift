import Capture
import GyroStore
import HostTime
import TestSupport
import XCTest
import ZoneInfo

/// The boards keep time for a gateway without a real-time clock: a power cycle whose start the
/// gateway measured while synchronised dates it after a restart with a wrong, unsynchronised
/// clock (`CaptureEngine.boardClockRead`).
final class BoardDatingTests: XCTestCase {
    let device = "C4:BE:84:00:00:01"
    let trueNow = 1_795_255_200.0
    let behind = 3 * 86_400.0

    func engine(_ store: GyroStore, wall: Double, synchronised: Bool) -> (CaptureEngine, GatewayClock) {
        let clock = GatewayClock(kernel: .init(wall: { wall }, monotonic: { 0 }, synchronised: { (synchronised, nil) }))
        let engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: 100, commitInterval: .seconds(60)),
                                   calendar: PeriodCalendar(timeZone: try! Zone.named("Europe/London")), logger: testLogger(),
                                   now: { clock.timeline() * 1000 }, clock: clock)
        return (engine, clock)
    }

    func testACycleAnchoredWhileSynchronisedDatesTheGatewayAfterARestart() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        // A synchronised run reads the board: its cycle began an hour before.
        do {
            let store = try GyroStore.open(directory: folder.path, logger: testLogger())
            let (engine, _) = engine(store, wall: trueNow, synchronised: true)
            try await engine.boardClockRead(device: device, resetUID: 5, measuredResetTime: trueNow - 3600)
            let anchor = try await store.boardClockAnchor(device: device, resetUID: 5)
            XCTAssertEqual(anchor, GyroStore.BoardClockAnchor(resetTime: trueNow - 3600, measuredAt: trueNow))
        }
        // Ten minutes later, restarted with the clock 3 days behind: the same cycle, measured on
        // the wrong clock, puts its start 3 days earlier; the board says by how much.
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let (engine, clock) = engine(store, wall: trueNow + 600 - behind, synchronised: false)
        XCTAssertEqual(clock.dating, .unsynchronised)
        try await engine.boardClockRead(device: device, resetUID: 5, measuredResetTime: trueNow - 3600 - behind + 0.002)
        XCTAssertEqual(clock.dating, .board)
        XCTAssertEqual(clock.snapshot.boardSource, device)
        XCTAssertEqual(clock.now(), trueNow + 600 - 0.002, accuracy: 1e-6)
        clock.stopWatching()
        var redatings: [Redating] = []
        for await redating in clock.redatings { redatings.append(redating) }
        XCTAssertEqual(redatings.map(\.dating), [.board])
        XCTAssertEqual(try XCTUnwrap(redatings.first).delta, behind - 0.002, accuracy: 1e-6)
    }

    func testACycleThatWouldDateTheBoardBeforeItsLastSampleIsAnother() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        do {
            let (engine, _) = engine(store, wall: trueNow, synchronised: true)
            try await engine.boardClockRead(device: device, resetUID: 2, measuredResetTime: trueNow - 60)
            // It streamed for an hour after that reading.
            let sensor = SensorIdentity(device: device, userId: "u")
            try await engine.append(sensor: sensor, stream: .gyro, odrHz: 1, range: 2000, firstIndex: 0,
                                    samples: [StoredSample(timestampMs: (trueNow + 3600) * 1000, x: 0, y: 0, z: 0)])
            try await engine.flush()
        }
        // It reset and its new cycle reuses the 3-bit reset_uid: ten minutes into that cycle, the
        // old anchor would date it before its own last sample.
        let (engine, clock) = engine(store, wall: trueNow + 7200 - behind, synchronised: false)
        try await engine.boardClockRead(device: device, resetUID: 2, measuredResetTime: trueNow + 7200 - 600 - behind)
        XCTAssertEqual(clock.dating, .unsynchronised, "not taken for the anchored cycle")
    }
}
