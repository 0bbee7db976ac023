@testable import Export
import SupportCore
import XCTest

/// The merged table's two bounds (a sample within a period of its row's time, one row's samples
/// within a period of each other) on boards as the field gives them: streams that start at any
/// phase after a reconnect, crystals off by up to 500 ppm, stamps jittered by a log tick, gaps.
/// The export test once found two samples in a row 11.0 ms apart at 100 Hz (a board's phase
/// still following its new stream); these draw thousands of such tables.
final class MergeGridTests: XCTestCase {
    let period = 10_000.0

    /// One board's sample times, microseconds after the table's start: streams with gaps between.
    func board(_ random: inout SplitMix64, start: Double, seconds: Double, jitter: Double) -> [Double] {
        var times: [Double] = []
        var time = start
        let end = start + seconds * 1_000_000
        while time < end {
            let drift = 1 + Double.random(in: -500...500, using: &random) / 1_000_000
            let samples = Int.random(in: 20...400, using: &random)
            for index in 0..<samples {
                times.append(time + Double(index) * period * drift + Double.random(in: -jitter...jitter, using: &random))
            }
            // The next stream: after an outage (or none, a stream's samples lost in the air), at any phase.
            time += Double(samples) * period * drift + Double.random(in: 0...3_000_000, using: &random)
        }
        return times.sorted()
    }

    struct Placed {
        var rows: [[(board: Int, time: Double)]] = []
        var rowIndex: [Int64] = []
        var dropped = 0
    }

    func merge(_ boards: [[Double]]) -> Placed {
        var grid = MergeGrid(period: period, boards: boards.count)
        var next = [Int](repeating: 0, count: boards.count)
        var placed = Placed()
        while true {
            let times = boards.indices.map { next[$0] < boards[$0].count ? boards[$0][next[$0]] : nil }
            switch grid.next(times) {
            case .end: return placed
            case .drop(let board):
                next[board] += 1
                placed.dropped += 1
            case .row(let row, let inRow):
                XCTAssertFalse(inRow.isEmpty, "a row with a sample")
                XCTAssertGreaterThan(row, placed.rowIndex.last ?? -1, "rows in order")
                placed.rows.append(inRow.map { ($0, times[$0]!) })
                placed.rowIndex.append(row)
                for board in inRow { next[board] += 1 }
            }
        }
    }

    func testEverySampleWithinAPeriodOfItsRowAndOfTheRowsOthers() {
        var random = SplitMix64.fresh("MergeGridTests")
        var worstSpread = 0.0, worstOffGrid = 0.0, dropped = 0, samples = 0
        for table in 0..<600 {
            let count = Int.random(in: 2...3, using: &random)
            let jitter = [100.0, 730.0][table % 2]
            var boards = (0..<count).map { _ in
                board(&random, start: Double.random(in: 0...50_000, using: &random), seconds: 8, jitter: jitter)
            }
            let t0 = boards.compactMap(\.first).min() ?? 0
            boards = boards.map { $0.map { $0 - t0 } }
            samples += boards.map(\.count).reduce(0, +)
            let placed = merge(boards)
            dropped += placed.dropped
            XCTAssertEqual(placed.rows.map(\.count).reduce(0, +) + placed.dropped, boards.map(\.count).reduce(0, +),
                           "each sample once, seed \(random.seed) table \(table)")
            for (row, inRow) in zip(placed.rowIndex, placed.rows) {
                let times = inRow.map(\.time)
                let spread = times.max()! - times.min()!
                let offGrid = times.map { abs($0 - Double(row) * period) }.max()!
                worstSpread = max(worstSpread, spread)
                worstOffGrid = max(worstOffGrid, offGrid)
                if spread >= period || offGrid >= period {
                    XCTFail("row \(row) of table \(table) (seed \(random.seed)): \(inRow), spread \(spread) µs, off the grid \(offGrid) µs")
                    return
                }
            }
        }
        print("MergeGridTests: \(samples) samples, \(dropped) left out, worst spread \(worstSpread) µs, worst off the grid \(worstOffGrid) µs")
        // A board faster than the grid (its crystal) must lose a sample to get back within a
        // period of its rows; drawn this harshly (a new stream every 20-400 samples), 2-5 in 100,000.
        XCTAssertLessThan(Double(dropped), Double(samples) * 1e-4, "hardly any sample left out, seed \(random.seed)")
    }

    /// Two boards streaming together at fixed phases share their rows: the lines do not let
    /// jitter split a pair (one row each, half empty).
    func testSteadyBoardsShareTheirRows() {
        var random = SplitMix64(seed: 42)
        for offset in stride(from: 0.0, through: 9_000, by: 1_500) {
            let a = (0..<1_000).map { Double($0) * period + Double.random(in: -730...730, using: &random) + 1_000 }
            let b = (0..<1_000).map { Double($0) * period + offset + Double.random(in: -730...730, using: &random) + 1_000 }
            let placed = merge([a, b])
            let shared = placed.rows.filter { $0.count == 2 }.count
            XCTAssertGreaterThanOrEqual(shared, 990, "offset \(offset) µs: \(shared) of 1000 rows with both boards")
        }
    }
}
