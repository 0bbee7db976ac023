import GyroStore

/// Several boards of one user, captured together, as one table on a common time base, as
/// MetaBase users line their files up by hand (docs/export.md, "Merged").
///
/// The rows are a grid at the highest of the boards' rates, from the earliest first sample;
/// ``MergeGrid`` says which board's sample goes in which row: each within a period of its row's
/// time, two boards' samples in a row within a period of each other. A board with no sample in
/// a row (a gap, not started yet, ended) has empty cells; rows where no board has one are left
/// out. A sample the grid leaves out is counted in the debug log.
struct MergedTable {
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
        var grid = MergeGrid(period: 1_000_000 / rate, boards: cursors.count)
        var time = LocalTime(offsetSeconds: offsetSeconds)
        var cells = [ChunkBody.Point?](repeating: nil, count: cursors.count)
        var times = [Double?](repeating: nil, count: cursors.count)
        var dropped = 0
        while true {
            for index in cursors.indices {
                times[index] = try await cursors[index].peekTime().map { Double($0 - t0) }
            }
            let row: Int64
            switch grid.next(times) {
            case .end:
                droppedSamples = dropped
                if !buffer.isEmpty { try await output.write(buffer) }
                return
            case .drop(let board):
                _ = try await cursors[board].next()
                dropped += 1
                continue
            case .row(let next, let boards):
                row = next
                for index in cursors.indices {
                    cells[index] = boards.contains(index) ? try await cursors[index].next()?.point : nil
                }
            }
            let at = t0 + Int64((Double(row) * grid.period).rounded())
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
    }
}
