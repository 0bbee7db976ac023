import GyroStore

/// One stored sample on its way out: its point (time in epoch microseconds, axes in 1e-5 of
/// the stream's unit), and the gaps the record places just before it.
struct ExportSample {
    var point: ChunkBody.Point
    /// Samples missing just before this one, summed over the gaps that end before it.
    var missingBefore: Int64 = 0
    /// Their reasons, `;`-joined when several gaps end between two samples.
    var gapReasons: String = ""
}

/// A session stream's samples in order, read a chunk at a time: what the export holds at once
/// is one chunk's points, whatever the session's length.
struct SampleCursor {
    let reader: ExportReader
    private var chunkIds: ArraySlice<String>
    private var points: [ChunkBody.Point] = []
    private var at = 0
    /// The stream's gaps by end, those not yet placed before a sample.
    private var gaps: ArraySlice<GapRange>
    /// The rate of the chunk being read (a rate change starts a chunk).
    private(set) var odrHz: Double?

    init(reader: ExportReader, chunkIds: [String], gaps: [GapRange]) {
        self.reader = reader
        self.chunkIds = chunkIds[...]
        self.gaps = gaps.sorted { $0.toMs < $1.toMs }[...]
    }

    /// The gaps left after the last sample (recorded, but followed by no stored sample).
    var trailingGaps: [GapRange] { Array(gaps) }

    /// The next sample, or `nil` at the stream's end.
    mutating func next() async throws(ExportError) -> ExportSample? {
        guard try await load() else { return nil }
        defer { at += 1 }
        var sample = ExportSample(point: points[at])
        // A gap's `to` is when its last missing sample was due: it ends before the next stored one.
        let micros = sample.point.time
        while let gap = gaps.first, Int64((gap.toMs * 1000).rounded()) < micros {
            gaps.removeFirst()
            sample.missingBefore += gap.missing
            sample.gapReasons += (sample.gapReasons.isEmpty ? "" : ";") + gap.reason.rawValue
        }
        return sample
    }

    /// The time of the next sample without taking it; `nil` at the stream's end.
    mutating func peekTime() async throws(ExportError) -> Int64? {
        guard try await load() else { return nil }
        return points[at].time
    }

    /// Reads chunks until one has a point left; `false` at the stream's end. Chunks gone since
    /// the listing (a session deleted meanwhile) and pruned ones are passed over.
    private mutating func load() async throws(ExportError) -> Bool {
        while at == points.count {
            guard let id = chunkIds.popFirst() else { return false }
            let read: ChunkPoints?
            do { read = try await reader.points(ofChunk: id) } catch { throw .store(error) }
            guard let read else { continue }
            points = read.points
            at = 0
            odrHz = read.chunk.odrHz
        }
        return true
    }
}
