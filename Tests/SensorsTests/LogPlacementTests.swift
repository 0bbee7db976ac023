import MetaWear
import XCTest
@testable import Sensors

/// Where a logged sample lands on the host clock across the u32 tick's wrap.
final class LogPlacementTests: XCTestCase {
    let tick = Logging.tickMilliseconds / 1000
    let lap = Logging.tickLapSeconds

    func sample(_ tick: UInt32) -> LogReassembler.Sample {
        LogReassembler.Sample(resetUID: 1, tick: tick, triple: RawTriple(x: 0, y: 0, z: 0))
    }

    func testWithoutAWrapTheTickCountsFromTheReference() {
        let time = SensorSupervisor.logTime(sample(1000), reset: 5000, notAfter: 6000)
        XCTAssertEqual(time, 5000 + 1000.5 * tick, accuracy: 1e-9)
    }

    /// The reference was read after the wrap (tick 0 of the new lap at 10_000 s): entries from
    /// before it (large ticks) lie in the lap before, those after it (small ticks) in this one.
    func testEntriesOnBothSidesOfAWrapReadAfterIt() {
        let reset = 10_000.0
        let before = SensorSupervisor.logTime(sample(UInt32.max - 100), reset: reset, notAfter: reset + 30)
        let after = SensorSupervisor.logTime(sample(100), reset: reset, notAfter: reset + 30)
        XCTAssertEqual(before, reset - 100.5 * tick, accuracy: 1e-6)
        XCTAssertEqual(after, reset + 100.5 * tick, accuracy: 1e-6)
    }

    /// The reference was read before the wrap (a power cycle that then wrapped and reset during an
    /// outage): entries after the wrap lie one lap after the reference's tick 0.
    func testEntriesAfterAWrapReadBeforeIt() {
        let reset = 0.0
        let notAfter = lap + 60
        let before = SensorSupervisor.logTime(sample(UInt32.max - 6), reset: reset, notAfter: notAfter)
        let after = SensorSupervisor.logTime(sample(6), reset: reset, notAfter: notAfter)
        XCTAssertEqual(after - before, 13 * tick, accuracy: 1e-6)
        XCTAssertEqual(after, lap + 6.5 * tick, accuracy: 1e-6)
    }
}
