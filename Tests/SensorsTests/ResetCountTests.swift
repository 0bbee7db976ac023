import Foundation
import MetaWear
import XCTest
@testable import Sensors

/// The samples a board lost to a reset during an outage: estimated from the reset time read off
/// its log clock (that reading's latency included), then made exact from its log where the log
/// holds every entry up to the reset.
final class ResetCountTests: XCTestCase {
    static let tick = Logging.tickMilliseconds / 1000

    /// A held stream gets no index until the count is settled; the settled count replaces the
    /// estimate, and the new stream's first sample follows it.
    func testAHeldStreamTakesTheSettledCount() {
        for (settled, firstIndex) in [(Int64?.some(47), Int64(147)), (49, 149), (nil, 150), (0, 100)] {
            var tracker = StreamTracker.afterHundredSamples(confirmationWindow: 0.3, warmUpWindow: 0.1)
            // The reset read 5 ms late: the estimate counts 50 where the board produced fewer.
            tracker.restart(end: .reset(at: 51.4973, linkUp: false), reason: .boardReset)
            XCTAssertEqual(tracker.missingSamples, 50)
            tracker.holdForResetCount()
            tracker.restart(end: .stopped(at: 52), reason: .reinitialised)  // the start of the new stream
            var batches: [StreamTracker.Batch] = []
            for k in 0..<60 {
                batches += tracker.push(RawTriples(RawTriple(x: Int16(k), y: 0, z: 0)), arrival: 52 + Double(k) / 100 + 0.002)
            }
            XCTAssertEqual(batches, [], "held for the count, beyond the warm-up")
            XCTAssertTrue(tracker.awaitsResetCount)
            tracker.settleResetCount(settled) { batches.append($0) }
            XCTAssertFalse(tracker.awaitsResetCount)
            XCTAssertEqual(batches.first?.firstIndex, firstIndex, "settled with \(String(describing: settled))")
            XCTAssertEqual(batches.first?.samples.first?.x, 0)
            XCTAssertEqual(batches.first?.gapReason, .boardReset)
            XCTAssertEqual(tracker.missingSamples, firstIndex - 100)
        }
    }

    /// A link lost before the log was read: the held samples go out with the estimate.
    func testAFlushGivesUpTheHold() {
        var tracker = StreamTracker.afterHundredSamples(confirmationWindow: 0.3, warmUpWindow: 0.1)
        tracker.restart(end: .reset(at: 51.4973, linkUp: false), reason: .boardReset)
        tracker.holdForResetCount()
        tracker.restart(end: .stopped(at: 52), reason: .reinitialised)
        for k in 0..<30 { _ = tracker.push(RawTriples(RawTriple(x: Int16(k), y: 0, z: 0)), arrival: 52 + Double(k) / 100) }
        let batches = tracker.flush()
        XCTAssertFalse(tracker.awaitsResetCount)
        XCTAssertEqual(batches.first?.firstIndex, 150)
    }

    /// The log's samples of the old power cycle after the last one received, on the ticks a board
    /// logs them (the end of the last received one's tick is its board time as streamed).
    func testTheLogCountsWhatFollowedTheLastSampleReceived() {
        let reset = 1_000.0
        // 100 Hz on 1.46 ms ticks: sample n logged at tick floor(n × 10 ms / tick).
        let ticks = (0..<300).map { UInt32((Double($0) * 0.01 / Self.tick).rounded(.down)) }
        let logged = ticks.map { LogReassembler.Sample(resetUID: 3, tick: $0, triple: RawTriple(x: 0, y: 0, z: 0)) }
            + ticks.prefix(20).map { LogReassembler.Sample(resetUID: 4, tick: $0, triple: RawTriple(x: 0, y: 0, z: 0)) }
        for received in [0, 149, 250, 299] {
            let last = reset + (Double(ticks[received]) + 1) * Self.tick
            let after = SensorSupervisor.loggedAfter(logged, resetUID: 3, last: last, reset: reset, notAfter: reset + 10)
            XCTAssertEqual(after, Int64(299 - received), "last received: sample \(received)")
        }
        // The log no longer holds the last sample received (trimmed, or a RAM page lost): no count.
        let trimmed = Array(logged[200...])
        let last = reset + (Double(ticks[150]) + 1) * Self.tick
        XCTAssertNil(SensorSupervisor.loggedAfter(trimmed, resetUID: 3, last: last, reset: reset, notAfter: reset + 10))
    }
}

extension ResetCountTests {
    /// End to end on the emulated MetaMotion R (every log entry in flash at once): a reset while out
    /// of reach, read back 60 ms late on the new link (`delay_clock_reply`), so the reset time puts
    /// 6 more samples before the reset than the board produced. The count comes from the log.
    func testAResetDuringAnOutageIsCountedFromTheLogNotTheLateClockReading() async throws {
        let harness = try await SensorPeerTests.Harness(sensors: 1, model: "MMR")
        defer { Task { await harness.shutdown() } }
        var settings = SensorPeerTests.settings(odr: .hz100)
        settings.board.backfill = BoardOptions.Backfill(keep: .seconds(1))
        harness.start(sensors: 1, settings: settings)
        try await harness.waitUntilStreaming(1)
        try await harness.waitForSamples(100)  // a second of the stream before the outage
        try harness.peer.control(["cmd": "drop_link", "sensor": 0, "away_s": 2])
        // Out of reach before the reset: the supervisor saw the link go.
        try await waitForStatus(harness.supervisors[0], "the outage noticed") { $0.state != .streaming }
        // The board produces a few samples into the outage before it resets: with none (a reset
        // within a sample period of the drop), the log rightly counts 0 and there is nothing to fill.
        try await waitFor("samples produced into the outage") {
            try harness.sensor(0)["samples_undelivered_tail"] as? Int ?? 0 >= 5
        }
        try harness.peer.control(["cmd": "delay_clock_reply", "sensor": 0, "delay_ms": 60])
        try harness.peer.control(["cmd": "restart", "sensor": 0, "keep_state": false])
        try await waitForStatus(harness.supervisors[0], "the backfill after the reset") { $0.backfilledSamples > 0 && $0.state == .streaming }
        try await harness.stopSupervisors()
        let (samples, gaps, _) = try await readBack(harness.store, device: SensorPeerTests.Harness.address(0))
        let runs = try harness.sensor(0)["gyro_runs"] as? [[String: Any]] ?? []
        XCTAssertEqual(checkRestarts(samples, runs: runs, lsbPerDps: 16.4), [])
        XCTAssertEqual(gaps.map(\.missing), [], "the reset's gap filled from the log, nothing left: \(gaps)")
    }
}
