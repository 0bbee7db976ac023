import XCTest

@testable import MetaWear
import SupportCore

final class SampleClockTests: XCTestCase {
    struct Stamp {
        var index: UInt64
        var time: Double
        var truth: Double
    }

    /// Simulates a stream: sample i is generated at `start + i × truePeriod`; a notification
    /// carrying `perNotification` samples leaves after its last sample and arrives `latency` plus
    /// jitter later. Returns every stamp with its generation time.
    func simulate(
        nominalRate: Double, truePeriod: Double, perNotification: Int, seconds: Double, latency: Double = 0.005,
        jitter: (inout SplitMix64, Double) -> Double
    ) -> (stamps: [Stamp], clock: SampleClock) {
        var rng = SplitMix64(seed: 42)
        var clock = SampleClock(nominalRate: nominalRate)
        var stamps: [Stamp] = []
        let start = 1_000.0
        var first: UInt64 = 0
        var lastArrival = -Double.infinity
        while Double(first) * truePeriod < seconds {
            let last = first + UInt64(perNotification - 1)
            let generated = start + Double(last) * truePeriod
            // Notifications arrive in order (one link).
            let arrival = max(generated + latency + jitter(&rng, generated), lastArrival)
            lastArrival = arrival
            let timing = clock.timestamp(sampleCount: perNotification, arrivalTime: arrival)
            XCTAssertEqual(timing.firstIndex, first)
            XCTAssertEqual(timing.count, perNotification)
            for k in 0..<perNotification {
                let index = timing.index(at: k)
                stamps.append(
                    Stamp(index: index, time: timing.time(at: k), truth: start + Double(index) * truePeriod + latency))
            }
            first += UInt64(perNotification)
        }
        return (stamps, clock)
    }

    func assertTracks(
        _ stamps: [Stamp], after warmUp: Double, period: Double, tolerance: Double = 0.001,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(stamps.map(\.index), Array(0..<UInt64(stamps.count)), "indices", file: file, line: line)
        for (a, b) in zip(stamps, stamps.dropFirst()) where b.time <= a.time {
            return XCTFail("stamps not strictly increasing at \(b.index)", file: file, line: line)
        }
        let settled = stamps.filter { $0.truth - stamps[0].truth >= warmUp }
        XCTAssertFalse(settled.isEmpty, file: file, line: line)
        var worstOffset = 0.0
        var worstSpacing = 0.0
        for (a, b) in zip(settled, settled.dropFirst()) {
            worstSpacing = max(worstSpacing, abs((b.time - a.time) - period))
        }
        for s in settled { worstOffset = max(worstOffset, abs(s.time - s.truth)) }
        XCTAssertLessThan(worstOffset, tolerance, "stamp vs generation + latency", file: file, line: line)
        XCTAssertLessThan(worstSpacing, tolerance, "spacing vs true period", file: file, line: line)
    }

    func testSteady100HzWithJitter() {
        let (stamps, clock) = simulate(nominalRate: 100, truePeriod: 0.01, perNotification: 1, seconds: 60) { rng, _ in
            Double.random(in: 0..<0.004, using: &rng)
        }
        assertTracks(stamps, after: 5, period: 0.01)
        XCTAssertEqual(clock.period, 0.01, accuracy: 0.01 * 1e-4)
        XCTAssertEqual(clock.nextIndex, 6000)
    }

    func testSteady100HzOnConnectionEvents() {
        // Arrivals quantised to 7.5 ms connection events: up to 7.5 ms of jitter.
        let (stamps, _) = simulate(nominalRate: 100, truePeriod: 0.01, perNotification: 1, seconds: 60) {
            _, generated in
            let ready = generated + 0.005
            return (ready / 0.0075).rounded(.up) * 0.0075 - ready
        }
        assertTracks(stamps, after: 5, period: 0.01)
    }

    func testPackedEvery30Milliseconds() {
        let (stamps, clock) = simulate(nominalRate: 100, truePeriod: 0.01, perNotification: 3, seconds: 60) { rng, _ in
            Double.random(in: 0..<0.005, using: &rng)
        }
        XCTAssertEqual(stamps.count % 3, 0)
        assertTracks(stamps, after: 5, period: 0.01)
        // Within one notification: distinct and evenly spaced at the clock's period.
        for n in stride(from: 0, to: stamps.count, by: 3) {
            XCTAssertEqual(stamps[n + 1].time - stamps[n].time, stamps[n + 2].time - stamps[n + 1].time, accuracy: 1e-9)
            XCTAssertGreaterThan(stamps[n + 1].time, stamps[n].time)
        }
        XCTAssertEqual(clock.period, 0.01, accuracy: 0.01 * 1e-4)
    }

    func testSensorRunningHalfAPercentFast() {
        let truePeriod = 0.01 / 1.005
        let (stamps, clock) = simulate(nominalRate: 100, truePeriod: truePeriod, perNotification: 3, seconds: 120) {
            rng, _ in Double.random(in: 0..<0.004, using: &rng)
        }
        assertTracks(stamps, after: 20, period: truePeriod)
        XCTAssertEqual(clock.period, truePeriod, accuracy: truePeriod * 1e-4)
    }

    func testSensorRunningHalfAPercentSlow() {
        let truePeriod = 0.01 / 0.995
        let (stamps, clock) = simulate(nominalRate: 100, truePeriod: truePeriod, perNotification: 1, seconds: 120) {
            rng, _ in Double.random(in: 0..<0.004, using: &rng)
        }
        assertTracks(stamps, after: 20, period: truePeriod)
        XCTAssertEqual(clock.period, truePeriod, accuracy: truePeriod * 1e-4)
    }

    func testPacked800HzInConnectionEventBursts() {
        // 800 Hz packed: a notification every 3.75 ms, delivered in bursts at 7.5 ms connection
        // events; the sensor runs 0.5 % fast.
        let truePeriod = 0.00125 / 1.005
        let (stamps, clock) = simulate(nominalRate: 800, truePeriod: truePeriod, perNotification: 3, seconds: 60) {
            rng, generated in
            let ready = generated + 0.002
            return (ready / 0.0075).rounded(.up) * 0.0075 - ready + Double.random(in: 0..<0.0005, using: &rng)
        }
        assertTracks(stamps, after: 15, period: truePeriod)
        XCTAssertEqual(clock.period, truePeriod, accuracy: truePeriod * 1e-4)
    }

    func testLinkStallsDoNotTiltTheRate() {
        // Every 7 s the link stalls for 1.2 s; the backlog then arrives in a burst. The stalled
        // windows' minima sit above the envelope and must not bend the period estimate.
        let truePeriod = 0.01 / 1.003
        let (stamps, clock) = simulate(nominalRate: 100, truePeriod: truePeriod, perNotification: 3, seconds: 120) {
            rng, generated in
            let phase = (generated - 1_000).truncatingRemainder(dividingBy: 7)
            let stall = phase >= 5.8 ? 7 - phase : 0
            return stall + Double.random(in: 0..<0.004, using: &rng)
        }
        XCTAssertEqual(clock.period, truePeriod, accuracy: truePeriod * 1e-4)
        // Samples that arrived on time are stamped within 1 ms, before and after stalls.
        let onTime = stamps.filter {
            let phase = ($0.truth - 0.005 - 1_000).truncatingRemainder(dividingBy: 7)
            return $0.truth - stamps[0].truth >= 20 && phase < 5.7
        }
        let worst = onTime.max { abs($0.time - $0.truth) < abs($1.time - $1.truth) }!
        XCTAssertLessThan(abs(worst.time - worst.truth), 0.001, "index \(worst.index) at \(worst.truth - 1_000) s")
    }

    func testCorrectionIsBounded() {
        // A 10 % error is outside the ±2 % bound: the period stops at the bound.
        let (_, clock) = simulate(nominalRate: 100, truePeriod: 0.009, perNotification: 1, seconds: 60) { _, _ in 0 }
        XCTAssertEqual(clock.period, 0.01 * 0.98, accuracy: 1e-12)
    }

    func testFirstNotificationAnchorsAndResetRestartsIndices() {
        var clock = SampleClock(nominalRate: 100)
        let first = clock.timestamp(sampleCount: 3, arrivalTime: 50)
        XCTAssertEqual(first.firstIndex, 0)
        XCTAssertEqual(first.time(at: 2), 50, accuracy: 1e-12)
        XCTAssertEqual(first.firstTime, 49.98, accuracy: 1e-12)
        let second = clock.timestamp(sampleCount: 1, arrivalTime: 50.012)
        XCTAssertEqual(second.firstIndex, 3)
        XCTAssertEqual(second.firstTime, 50.01, accuracy: 1e-12)
        // An early arrival pulls the line down (never stamped after arrival), yet stays increasing.
        let third = clock.timestamp(sampleCount: 1, arrivalTime: 50.0101)
        XCTAssertLessThanOrEqual(third.firstTime, 50.0101)
        XCTAssertGreaterThan(third.firstTime, second.firstTime)
        XCTAssertEqual(clock.timestamp(sampleCount: 0, arrivalTime: 51).count, 0)
        clock.reset()
        XCTAssertEqual(clock.nextIndex, 0)
        let again = clock.timestamp(sampleCount: 1, arrivalTime: 80)
        XCTAssertEqual(again.firstIndex, 0)
        XCTAssertEqual(again.firstTime, 80)
    }
}
