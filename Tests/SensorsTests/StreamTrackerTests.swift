import MetaWear
import TestSupport
import XCTest
@testable import Sensors

/// Gap detection from arrival times only (no counter on the wire), checked against the peer's
/// waveform, where x = n tells the truth.
final class StreamTrackerTests: XCTestCase {
    /// Emulates a board: sample n is produced at n/odr, delivered `perNotification` at a time,
    /// arriving after 2 ms plus up to `jitter` s. `dropped` samples are never sent; `stall`
    /// holds every arrival inside (from, to) until `to`.
    func run(odr: Double, perNotification: Int = 1, count: Int, dropped: Set<Int> = [], jitter: Double = 0.004,
             stall: (from: Double, to: Double)? = nil, seed: UInt64 = 1) -> (StreamTracker, [TimestampedSample], [Int64]) {
        var tracker = StreamTracker(odrHz: odr, decoder: SampleDecoder(lsbPerUnit: 1))
        var random = SplitMix64(seed: seed)
        var out: [TimestampedSample] = []
        var firstIndices: [Int64] = []
        var buffer: [RawTriple] = []
        var lastArrival = 0.0
        for n in 0..<count where !dropped.contains(n) {
            buffer.append(RawTriple(x: Int16(truncatingIfNeeded: n), y: 0, z: Int16(truncatingIfNeeded: -n)))
            guard buffer.count == perNotification else { continue }
            var arrival = 1000 + Double(n) / odr + 0.002 + jitter * random.unit()
            if let stall, arrival > stall.from, arrival < stall.to { arrival = stall.to }
            arrival = max(arrival, lastArrival)
            lastArrival = arrival
            for batch in tracker.push(RawTriples(buffer), arrival: arrival) {
                firstIndices.append(batch.firstIndex)
                out += batch.samples
            }
            buffer = []
        }
        for batch in tracker.flush() { out += batch.samples }
        return (tracker, out, firstIndices)
    }

    func assertIndicesMatchWaveform(_ samples: [TimestampedSample], file: StaticString = #filePath, line: UInt = #line) {
        for sample in samples where sample.x != Double(Int16(truncatingIfNeeded: Int(sample.index))) {
            XCTFail("index \(sample.index) carries n = \(sample.x)", file: file, line: line)
            return
        }
    }

    func assertEvenlySpaced(_ samples: [TimestampedSample], odr: Double, tolerance: Double = 0.001,
                            file: StaticString = #filePath, line: UInt = #line) {
        guard let first = samples.first else { return }
        var worst = 0.0
        for sample in samples {
            let expected = first.time + Double(sample.index - first.index) / odr
            worst = max(worst, abs(sample.time - expected))
        }
        XCTAssertLessThan(worst, tolerance, "timestamps off the 1/ODR grid by \(worst * 1000) ms", file: file, line: line)
    }

    func testSteadyStreamWithJitterHasNoGap() {
        let (tracker, samples, _) = run(odr: 100, count: 3000)
        XCTAssertEqual(tracker.gapCount, 0)
        XCTAssertEqual(samples.count, 3000)
        XCTAssertEqual(tracker.nextIndex, 3000)
        assertIndicesMatchWaveform(samples)
        assertEvenlySpaced(samples, odr: 100)
    }

    func testDroppedSamplesBecomeOneGapWithTheRightCount() {
        let (tracker, samples, _) = run(odr: 100, count: 2000, dropped: Set(700..<705))
        XCTAssertEqual(tracker.gapCount, 1)
        XCTAssertEqual(tracker.missingSamples, 5)
        XCTAssertEqual(samples.count, 1995)
        assertIndicesMatchWaveform(samples)
    }

    /// At 800 Hz the jitter (2 ms) is 1.6 sample periods. Time-based detection degrades when the
    /// jitter reaches several periods (see StreamTracker's comment); the peer's counter is the check.
    func testSeveralGapsAtHighRatePacked() {
        let dropped = Set(3000..<3021).union(9000..<9003).union(15000..<15300)
        let (tracker, samples, _) = run(odr: 800, perNotification: 3, count: 24000, dropped: dropped, jitter: 0.002)
        XCTAssertEqual(tracker.missingSamples, Int64(dropped.count))
        XCTAssertEqual(tracker.gapCount, 3)
        assertIndicesMatchWaveform(samples)
        assertEvenlySpaced(samples, odr: 800)
    }

    /// What the status shows as expected (indices assigned plus samples held unassigned) never
    /// falls below what was received: not during the warm-up, a stall, nor a confirmed loss.
    func testReceivedNeverExceedsExpectedWhileSamplesAreHeld() {
        var tracker = StreamTracker(odrHz: 100, decoder: SampleDecoder(lsbPerUnit: 1), confirmationWindow: 0.3, warmUpWindow: 0.1)
        var heldSomething = false
        var arrival = 1000.0
        for n in 0..<3000 where !(1200..<1207).contains(n) {
            arrival = max(arrival, 1000 + Double(n) / 100 + 0.002)
            if n > 2000, n < 2040 { arrival = 1000 + 20.5 }  // a stall, then a burst
            _ = tracker.push(RawTriples(RawTriple(x: Int16(truncatingIfNeeded: n), y: 0, z: 0)), arrival: arrival)
            heldSomething = heldSomething || tracker.heldSampleCount > 0
            XCTAssertLessThanOrEqual(tracker.receivedSamples, tracker.nextIndex + Int64(tracker.heldSampleCount), "after n = \(n)")
        }
        XCTAssertTrue(heldSomething, "the run held samples at some point")
        XCTAssertEqual(tracker.missingSamples, 7)
    }

    func testHostStallThenBurstIsNotAGap() {
        let (tracker, samples, _) = run(odr: 200, count: 4000, stall: (1005.0, 1005.3))
        XCTAssertEqual(tracker.gapCount, 0)
        XCTAssertEqual(samples.count, 4000)
        assertIndicesMatchWaveform(samples)
        assertEvenlySpaced(samples, odr: 200)
    }

    func testRestartDeclaresTheSamplesDueUntilTheStop() {
        var tracker = StreamTracker(odrHz: 100, decoder: SampleDecoder(lsbPerUnit: 1))
        for n in 0..<100 {
            _ = tracker.push(RawTriples(RawTriple(x: Int16(n), y: 0, z: 0)), arrival: 50 + Double(n) / 100 + 0.002)
        }
        XCTAssertTrue(tracker.flush().isEmpty)
        // Last sample n = 99 at ~50.992; the reset stopped the board 2.5 s later: n = 100…348 were lost.
        tracker.restart(end: .stopped(at: 50.99 + 2.5), reason: .disconnected("link lost"))
        XCTAssertEqual(tracker.missingSamples, 250)
        let batches = tracker.push(RawTriples(RawTriple(x: 0, y: 0, z: 0)), arrival: 54) + tracker.flush()
        XCTAssertEqual(batches.first?.firstIndex, 350)
        XCTAssertEqual(batches.first?.gapReason, .disconnected("link lost"))
    }

    /// A board that streamed up to the stop on the new link delivered everything before it: no
    /// gap, however late the stop came after the last sample.
    func testRestartAfterADeliveredStreamDeclaresNothing() {
        var tracker = StreamTracker.afterHundredSamples()
        tracker.restart(end: .delivered, reason: .disconnected("link lost"))
        XCTAssertEqual(tracker.missingSamples, 0)
        XCTAssertEqual(tracker.gapCount, 0)
        let batches = tracker.push(RawTriples(RawTriple(x: 0, y: 0, z: 0)), arrival: 52) + tracker.flush()
        XCTAssertEqual(batches.first?.firstIndex, 100)
    }

    /// A board that reset produced nothing after the reset. With the link up until the reset, the
    /// samples due more than half a period before it are missing (one due just before it was on
    /// its way over the live link); out of reach before it, every sample due before it is.
    func testRestartAfterAResetCountsUntilTheReset() {
        for (resetAfterLast, expected) in [(0.0004, Int64(0)), (0.0093, 0), (0.0149, 0), (0.0151, 1), (0.0355, 3)] {
            var tracker = StreamTracker.afterHundredSamples()
            let last = tracker.lastStamp!
            tracker.restart(end: .reset(at: last + resetAfterLast, linkUp: true), reason: .boardReset)
            XCTAssertEqual(tracker.missingSamples, expected, "reset \(resetAfterLast) s after the last sample")
        }
        // Out of reach before the reset: every sample due before it was produced and lost.
        for (resetAfterLast, expected) in [(0.0093, Int64(0)), (0.0101, 1), (0.0355, 3)] {
            var tracker = StreamTracker.afterHundredSamples()
            tracker.restart(end: .reset(at: tracker.lastStamp! + resetAfterLast, linkUp: false), reason: .boardReset)
            XCTAssertEqual(tracker.missingSamples, expected, "reset \(resetAfterLast) s after the last sample, out of reach")
        }
    }

    func testTheEndOfAStreamFollowsFromWhatTheBoardSaid() {
        XCTAssertEqual(StreamRestart(stopTime: 90, staleDelivered: true).end, .delivered)
        XCTAssertEqual(StreamRestart(stopTime: 90, staleDelivered: false).end, .stopped(at: 90))
    }

    /// A board that reset while out of reach and resumed its streams on its own (a new run of its
    /// counter from the reset): the old run's tail and the new run's head are counted apart, each
    /// on its own grid, and the next restart adds nothing.
    func testARunResumedAfterAResetCountsItsHeadFromTheReset() {
        var tracker = StreamTracker.afterHundredSamples(confirmationWindow: 0.3, warmUpWindow: 0.1)
        // Samples 100…149 of the old run were due before the reset at 51.4973 (out of reach).
        tracker.restart(end: .reset(at: 51.4973, linkUp: false), reason: .boardReset)
        XCTAssertEqual(tracker.missingSamples, 50)
        // The new run's sample k is due at 51.4973 + k / 100; the first 230 went nowhere.
        var batches: [StreamTracker.Batch] = []
        for k in 230..<300 {
            batches += tracker.push(RawTriples(RawTriple(x: Int16(k), y: 0, z: 0)), arrival: 51.4973 + Double(k) / 100 + 0.002)
        }
        batches += tracker.flush()
        XCTAssertEqual(tracker.missingSamples, 280)
        XCTAssertEqual(batches.first?.firstIndex, 380, "index 100 + 50 + 230 carries the new run's sample 230")
        XCTAssertEqual(batches.first?.samples.first?.x, 230)
        tracker.restart(end: .delivered, reason: .disconnected("link lost"))
        XCTAssertEqual(tracker.missingSamples, 280)
    }
}

extension StreamTrackerTests {
    /// Jitter of 6 sample periods (800 Hz on a 7.5 ms connection interval): a loss may be placed a
    /// notification off, but the total missing stays exact.
    func testHeavyJitterKeepsTheMissingTotal() {
        let dropped = Set(3000..<3021).union(9000..<9003).union(15000..<15300)
        for seed in UInt64(1)...3 {
            let (tracker, samples, _) = run(odr: 800, perNotification: 3, count: 24000, dropped: dropped, jitter: 0.0075, seed: seed)
            XCTAssertEqual(tracker.missingSamples, Int64(dropped.count), "seed \(seed)")
            XCTAssertEqual(samples.count, 24000 - dropped.count)
        }
    }

    /// Board time at 400 Hz, 2 samples a notification: each stamped at the end of its 1.46 ms
    /// tick, a step coarser than half a period (1.25 ms). Told the step, the tracker holds nothing
    /// for confirmation and still finds a lost notification, exactly.
    func testBoardTicksAt400HzAreNotHeldAndALossIsStillFound() {
        let tick = Logging.tickMilliseconds / 1000
        func stamps(dropping dropped: Set<Int>, resolution: Double) -> (held: Int, tracker: StreamTracker, out: [TimestampedSample]) {
            var tracker = StreamTracker(odrHz: 400, decoder: SampleDecoder(lsbPerUnit: 1), stampResolution: resolution)
            var out: [TimestampedSample] = []
            var held = 0
            for k in 0..<2000 where !dropped.contains(k) {
                let last = 2 * k + 1
                let produced = 7.3 + Double(last) / 400
                let arrival = ((produced / tick).rounded(.down) + 1) * tick
                let triples = RawTriples([RawTriple(x: Int16(last - 1), y: 0, z: 0), RawTriple(x: Int16(last), y: 0, z: 0)])
                tracker.push(triples, arrival: arrival) { out += $0.samples }
                if k >= 200, tracker.isHolding { held += 1 }  // after the warm-up (0.5 s)
            }
            tracker.flush { out += $0.samples }
            return (held, tracker, out)
        }
        let coarse = stamps(dropping: [], resolution: 0)
        XCTAssertGreaterThan(coarse.held, 100, "without the step, late ticks are taken for suspects")
        let told = stamps(dropping: [], resolution: tick)
        XCTAssertEqual(told.held, 0)
        XCTAssertEqual(told.tracker.missingSamples, 0)
        XCTAssertEqual(told.out.count, 4000)
        let lossy = stamps(dropping: [1200], resolution: tick)
        XCTAssertEqual(lossy.tracker.missingSamples, 2)
        XCTAssertEqual(lossy.tracker.gapCount, 1)
        assertIndicesMatchWaveform(lossy.out)
    }

}
