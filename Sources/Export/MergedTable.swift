import GyroStore

/// Several boards of one user, captured together, as one table on a common time base, as
/// MetaBase users line their files up by hand (docs/export.md, "Merged").
///
/// The rows are a grid at the highest of the boards' rates, from the earliest first sample:
/// row k is at t0 + k × period. Each board's samples keep to a line of their own, the grid
/// shifted by the board's phase (where its samples fall between two rows, followed as it
/// drifts), and go to the row nearest them on that line: so the jitter of a board's stamps (a
/// backfilled sample is placed to its log tick, 1.46 ms) does not move a sample to a
/// neighbour's row. The first board's phase is kept within half a period of the grid and every
/// other board's within half a period of the first board's, so that two boards' samples in a
/// row are the closest pair (within half a period, plus their stamps' jitter). A board with no
/// sample in a row (a gap, not started yet, ended) has empty cells; rows where no board has one
/// are left out. A board whose phase wraps past half a period (a rate off the nominal one, or
/// a new stream after a reconnect) skips a row there, or, when two of its samples would share
/// one, puts the later in the next row if it is within a period of it, else leaves it out
/// (counted in the debug log). So each sample is within a period of its row's time, and two
/// boards' samples in a row within one period of each other.
struct MergedTable {
    /// One board's place on the grid.
    struct Line {
        /// Where its samples fall from the rows' times, in microseconds, within half a period of
        /// the line's centre (0 for the first board, the first board's phase for the others).
        var phase: Double?
        var lastRow = Int64.min

        /// The row of a sample at `time` (microseconds after t0), by the phase as it stands:
        /// the nearest on the board's line, or the next free one when that is taken by its
        /// previous sample and this one is within a period of it (the phase jumped: a new
        /// stream after a reconnect, a backfill's first sample); `nil` for a sample further
        /// back, which is left out.
        func row(_ time: Double, period: Double, centre: Double) -> Int64? {
            let nearest = Int64(((time - (phase ?? centre)) / period).rounded())
            if nearest > lastRow { return nearest }
            return time - Double(lastRow + 1) * period > -period ? lastRow + 1 : nil
        }

        /// Follows the phase with the sample just placed in `row`; wraps it into half a period
        /// around `centre`.
        mutating func follow(_ time: Double, row: Int64, period: Double, centre: Double) {
            let offset = time - Double(row) * period
            var phase = self.phase.map { $0 + (offset - $0) / 8 } ?? offset
            if phase > centre + period / 2 { phase -= period } else if phase <= centre - period / 2 { phase += period }
            self.phase = phase
            lastRow = row
        }
    }

    let sessions: [SessionChunkOrder]
    let stream: ExportStream
    let offsetSeconds: Int
    private var cursors: [SampleCursor]
    /// Samples left out because two of a board's samples fell in one row.
    private(set) var droppedSamples = 0

    init(reader: ExportReader, sessions: [SessionChunkOrder], stream: ExportStream, offsetSeconds: Int) {
        self.sessions = sessions
        self.stream = stream
        self.offsetSeconds = offsetSeconds
        cursors = sessions.map { SampleCursor(reader: reader, chunkIds: $0.chunkIds(stream: stream.rawValue), gaps: []) }
    }

    static func header(_ sessions: [SessionChunkOrder], stream: ExportStream, offsetSeconds: Int) -> String {
        var header = "epoch (ms),time (\(LocalTime.offsetText(offsetSeconds))),elapsed (s)"
        for order in sessions {
            let mac = order.session.device.uppercased().filter { $0 != ":" }
            header += ",\(mac) epoch (ms),\(mac) x-axis (\(stream.unit)),\(mac) y-axis (\(stream.unit)),\(mac) z-axis (\(stream.unit))"
        }
        return header + "\n"
    }

    mutating func write(to output: any ExportOutput) async throws(ExportError) {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(SessionExporter.flushBytes + 1024)
        buffer.append(text: Self.header(sessions, stream: stream, offsetSeconds: offsetSeconds))
        var starts: [Int64] = []
        var rate = 0.0
        for index in cursors.indices {
            if let time = try await cursors[index].peekTime() { starts.append(time) }
            rate = max(rate, cursors[index].odrHz ?? 0)
        }
        guard let t0 = starts.min(), rate > 0 else { return try await output.write(buffer) }
        let period = 1_000_000 / rate
        var time = LocalTime(offsetSeconds: offsetSeconds)
        var lines = [Line](repeating: Line(), count: cursors.count)
        var cells = [ChunkBody.Point?](repeating: nil, count: cursors.count)
        var dropped = 0
        // Each board's line is centred on the first board's phase (the first's on the grid).
        func centre(_ index: Int) -> Double { index == 0 ? 0 : lines[0].phase ?? 0 }
        while true {
            // The next row: the earliest any board's next sample goes to.
            var next: Int64?
            for index in cursors.indices {
                while let t = try await cursors[index].peekTime() {
                    if let row = lines[index].row(Double(t - t0), period: period, centre: centre(index)) { next = min(next ?? row, row); break }
                    _ = try await cursors[index].next()
                    dropped += 1
                }
            }
            guard let row = next else { break }
            for index in cursors.indices {
                cells[index] = nil
                guard let t = try await cursors[index].peekTime(),
                      lines[index].row(Double(t - t0), period: period, centre: centre(index)) == row else { continue }
                cells[index] = try await cursors[index].next()?.point
                lines[index].follow(Double(t - t0), row: row, period: period, centre: centre(index))
            }
            let at = t0 + Int64((Double(row) * period).rounded())
            buffer.append(fixed: at, scale: 3, places: 3)
            buffer.append(UInt8(ascii: ","))
            time.append(micros: at, to: &buffer)
            buffer.append(UInt8(ascii: ","))
            buffer.append(fixed: at - t0, scale: 6, places: 3)
            for cell in cells {
                guard let point = cell else { buffer.append(",,,,"); continue }
                buffer.append(UInt8(ascii: ","))
                buffer.append(fixed: point.time, scale: 3, places: 3)
                for value in [point.x, point.y, point.z] {
                    buffer.append(UInt8(ascii: ","))
                    if value != ChunkBody.Point.missingValue { buffer.append(fixed: value, scale: 5, places: stream.csvDecimals) }
                }
            }
            buffer.append(UInt8(ascii: "\n"))
            if buffer.count >= SessionExporter.flushBytes {
                try await output.write(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        droppedSamples = dropped
        if !buffer.isEmpty { try await output.write(buffer) }
    }
}
