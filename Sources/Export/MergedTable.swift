import GyroStore

/// Several boards of one user, captured together, as one table on a common time base, as
/// MetaBase users line their files up by hand (docs/export.md, "Merged").
///
/// The time base is a grid at the highest of the boards' rates, from the earliest first
/// sample: row k is at t0 + k × period. Each board's cell in a row is its sample nearest the
/// row's time within half a period (at most one can be); a board with none there (a gap, or
/// not yet started) has empty cells. Rows where no board has a sample are left out. So every
/// board's sample in a row is within half a period of the row's time, and two boards' samples
/// in a row within one period of each other. A board whose clock runs off the grid (a rate
/// that differs from the nominal one) shifts by one row now and then: one row empty for it,
/// or, when two of its samples fall in one row's window, the later one left out (counted in
/// the debug log).
struct MergedTable {
    let sessions: [SessionChunkOrder]
    let stream: ExportStream
    let offsetSeconds: Int
    private var cursors: [SampleCursor]

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
        let half = Int64((period / 2).rounded(.down))
        var time = LocalTime(offsetSeconds: offsetSeconds)
        var row: Int64 = 0
        var cells = [ChunkBody.Point?](repeating: nil, count: cursors.count)
        while true {
            let at = t0 + Int64((Double(row) * period).rounded())
            var next: Int64?
            var any = false
            for index in cursors.indices {
                cells[index] = nil
                // Samples before this row's window missed their own row (two in one window): left out.
                while let t = try await cursors[index].peekTime(), t < at - half { _ = try await cursors[index].next() }
                if let t = try await cursors[index].peekTime() {
                    if t <= at + half {
                        cells[index] = try await cursors[index].next()?.point
                        any = true
                    } else {
                        next = min(next ?? t, t)
                    }
                }
            }
            if !any {
                guard let next else { break }
                // Skip the empty rows of a gap every board shares in one step.
                row = max(row + 1, Int64(((Double(next - t0) - Double(half)) / period).rounded(.up)))
                continue
            }
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
            row += 1
            if buffer.count >= SessionExporter.flushBytes {
                try await output.write(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        if !buffer.isEmpty { try await output.write(buffer) }
    }
}
