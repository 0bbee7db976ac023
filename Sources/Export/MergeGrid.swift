/// Where a merged table's samples go: the rows of a grid at one period, and for each board a
/// line on it (docs/export.md, "Merged").
///
/// Row k is at k × period after the table's first sample. Each board's samples keep to a line
/// of their own, the grid shifted by the board's phase (where its samples fall between two rows,
/// followed as it drifts), and go to the row nearest them on that line: so the jitter of a
/// board's stamps (a backfilled sample is placed to its log tick, 1.46 ms) does not move a
/// sample to a neighbour's row. The first board's phase is kept within half a period of the
/// grid and every other board's within half a period of the first board's, so that two boards'
/// samples in a row are the closest pair (unless that would put a line more than a period less
/// the stamps' jitter from the grid). A phase is followed, not jumped, so for a few samples
/// after a new stream (a reconnect, a backfill's first sample) the lines can be off; two bounds
/// hold whatever the phases say, because readers line boards up by the row:
/// - a sample is less than a period from its row's time (a line's choice is clamped to that);
/// - the samples of one row are less than a period apart: a board whose sample is a period or
///   more after the row's earliest waits for the next row (it is then less than a period from
///   that row's time too, shown at ``next(_:)``).
///
/// A board whose phase wraps past half a period (a rate off the nominal one, a new stream)
/// skips a row there or, when two of its samples would share one, puts the later in the next
/// row; a sample that would go before its board's last row is left out (``Step/drop(board:)``).
struct MergeGrid: Sendable {
    /// What the table does next.
    enum Step: Equatable, Sendable {
        /// Write row `row` with the next sample of each board in `boards` (in board order).
        case row(Int64, boards: [Int])
        /// Leave out `board`'s next sample: it would go before the board's last row.
        case drop(board: Int)
        /// No board has a sample left.
        case end
    }

    /// One board's place on the grid.
    struct Line: Sendable {
        /// Where its samples fall from the rows' times, in microseconds, within the board's
        /// range (``MergeGrid/low(_:)``).
        var phase: Double?
        /// The last row the board has a sample in, or is kept out of (it waited for the next).
        var lastRow = Int64.min
        /// The time of the board's last sample placed.
        var lastTime: Double?

        /// The phase for a sample at `time`: none after a gap of more than half a period (a
        /// new stream after a reconnect or a backfill starts at a phase of its own, which the
        /// line takes at once rather than following it over a few samples).
        func phase(at time: Double, period: Double) -> Double? {
            guard let lastTime, time - lastTime < 1.5 * period else { return nil }
            return phase
        }
    }

    /// Microseconds between rows.
    let period: Double
    private(set) var lines: [Line]
    /// The last row written: a line whose centre moved since may not go back into it.
    private var lastRow = Int64.min

    init(period: Double, boards: Int) {
        self.period = period
        lines = [Line](repeating: Line(), count: boards)
    }

    /// The next step, given each board's next sample time in microseconds after the table's
    /// first sample (`nil` for a board with none left). A board in the returned row has its
    /// sample taken; the others keep theirs for a later step.
    ///
    /// Every step takes or drops a sample, so a table ends. A board that waits loses nothing:
    /// its sample `t` is at least a period after the row's earliest `e`, which is more than
    /// `row - period` (the first bound), so `t > row` and the next row is less than a period from it.
    mutating func next(_ times: [Double?]) -> Step {
        var candidates: [(board: Int, row: Int64, time: Double)] = []
        for (board, time) in times.enumerated() {
            guard let time else { continue }
            guard let row = row(board, time) else { return .drop(board: board) }
            candidates.append((board, row, time))
        }
        guard let row = candidates.map(\.row).min() else { return .end }
        let inRow = candidates.filter { $0.row == row }
        let earliest = inRow.map(\.time).min() ?? 0
        var boards: [Int] = []
        for candidate in inRow {
            if candidate.time - earliest < period {
                follow(candidate.board, candidate.time, row: row)
                boards.append(candidate.board)
            } else {
                lines[candidate.board].lastRow = row
            }
        }
        lastRow = row
        return .row(row, boards: boards)
    }

    /// The centre of a board's phase: the grid for the first, the first board's phase for the others.
    private func centre(_ board: Int) -> Double { board == 0 ? 0 : lines[0].phase ?? 0 }

    /// The row of a board's sample at `time`: the nearest on its line, kept within a period of
    /// the time; when that one is taken (by the board's last sample, or written already: the
    /// first board's phase, the others' centre, moved), the next row if this sample is within a
    /// period of it (the phase jumped); `nil` for a sample further back.
    private func row(_ board: Int, _ time: Double) -> Int64? {
        let line = lines[board]
        let onLine = Int64(((time - (line.phase(at: time, period: period) ?? centre(board))) / period).rounded())
        let grid = time / period
        let nearest = min(max(onLine, Int64((grid - 1).rounded(.down)) + 1), Int64((grid + 1).rounded(.up)) - 1)
        let taken = max(line.lastRow, lastRow)
        if nearest > taken { return nearest }
        return time - Double(taken + 1) * period > -period ? taken + 1 : nil
    }

    /// Follows a board's phase with the sample just placed in `row`, and wraps it into the
    /// board's range. The first board's is followed before the others' in a row, so theirs are
    /// centred on its phase as it now stands.
    private mutating func follow(_ board: Int, _ time: Double, row: Int64) {
        let offset = time - Double(row) * period
        // The offset is taken a whole period nearer the phase when the row was not the line's
        // own (the last row taken, a bound): a phase is a time modulo the period.
        var phase = lines[board].phase(at: time, period: period).map { $0 + (offset - $0).remainder(dividingBy: period) / 8 } ?? offset
        let low = low(board)
        if phase > low + period { phase -= period } else if phase <= low { phase += period }
        lines[board].phase = phase
        lines[board].lastRow = row
        lines[board].lastTime = time
    }

    /// Stamps' jitter a line leaves room for (a backfilled stamp is up to half a log tick,
    /// 0.73 ms, from its sample's time), so that a jittered sample stays within a period of
    /// the row its line gives it: past that the first bound would move it to a neighbour's row.
    private var jitter: Double { min(period / 4, 1_000) }

    /// The bottom of a board's phase range, which is a period wide: half a period either side of
    /// the grid for the first board; for the others, half a period either side of the first
    /// board's phase, moved to within `period - jitter` of the grid.
    private func low(_ board: Int) -> Double {
        guard board > 0 else { return -period / 2 }
        return min(max(centre(board) - period / 2, jitter - period), -jitter)
    }
}
