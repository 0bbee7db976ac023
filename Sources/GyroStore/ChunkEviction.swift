/// A chunk document that retention evicted before it was published: its samples are gone from
/// the gateway and will never reach the broker, so its session records them as `storeFull` gaps.
public struct ChunkEviction: Sendable, Equatable {
    public var sessionId: String
    public var chunkId: String
    /// Samples the chunk held: they move from the session's `samples` to its missing ones.
    public var samples: Int64
    /// The index runs those samples occupied, as `storeFull` gaps (more than one when the chunk
    /// already had gaps inside it, which stay as they are).
    public var gaps: [GapRange]

    public init(chunk: ChunkRecord) {
        sessionId = chunk.sessionId
        chunkId = chunk.id
        samples = Int64(max(0, chunk.count))
        gaps = Self.sampleRuns(of: chunk)
    }

    /// The chunk's samples as runs of consecutive indices, split around the gaps inside it.
    /// A gap's `fromMs`/`toMs` are one period after/before the samples around it (see
    /// `CaptureEngine.gapRange`), which gives the times of the runs' ends.
    static func sampleRuns(of chunk: ChunkRecord) -> [GapRange] {
        guard chunk.count > 0, let startMs = chunk.startMs, let endMs = chunk.endMs else { return [] }
        let period = chunk.odrHz > 0 ? 1000 / chunk.odrHz : 0
        var runs: [GapRange] = []
        var index = chunk.firstIndex, fromMs = startMs, left = Int64(chunk.count)
        // Gaps that end before the first sample precede the chunk (it starts after them).
        for gap in chunk.gaps.filter({ $0.fromIndex > chunk.firstIndex }).sorted(by: { $0.fromIndex < $1.fromIndex }) {
            let length = min(max(0, gap.fromIndex - index), left)
            if length > 0 {
                runs.append(GapRange(stream: chunk.stream, fromIndex: index, toIndex: index + length - 1, fromMs: fromMs,
                                     toMs: gap.fromMs - period, missing: length, reason: .storeFull))
            }
            left -= length
            index = max(index + length, gap.toIndex + 1)
            fromMs = gap.toMs + period
        }
        if left > 0 {
            runs.append(GapRange(stream: chunk.stream, fromIndex: index, toIndex: index + left - 1, fromMs: fromMs,
                                 toMs: endMs, missing: left, reason: .storeFull))
        }
        return runs
    }
}

extension SessionRecord {
    /// Accounts for an evicted chunk the way capture accounts for lost samples: `expected`
    /// stays, `samples` loses the chunk's samples, and its runs join `gaps`, so that
    /// `expected - samples` is still the sum of the gaps' `missing`. The chunk leaves
    /// `gscope_data`/`accel_data`: its document will never exist downstream.
    public mutating func recordEviction(_ eviction: ChunkEviction) {
        samples = max(0, samples - eviction.samples)
        chunkIds.removeAll { $0 == eviction.chunkId }
        accelChunkIds.removeAll { $0 == eviction.chunkId }
        for gap in eviction.gaps { addEvicted(gap) }
    }

    /// Retention evicts oldest first, so consecutive evicted chunks of a stream merge into one
    /// gap instead of growing the record by one entry per chunk. Otherwise the gap goes in
    /// time order.
    mutating func addEvicted(_ gap: GapRange) {
        func joins(_ other: GapRange) -> Bool { other.reason == gap.reason && other.stream == gap.stream }
        if let before = gaps.firstIndex(where: { joins($0) && $0.toIndex + 1 == gap.fromIndex }) {
            gaps[before].toIndex = gap.toIndex
            gaps[before].toMs = gap.toMs
            gaps[before].missing += gap.missing
            if let after = gaps.firstIndex(where: { joins($0) && $0.fromIndex == gap.toIndex + 1 }) {
                gaps[before].toIndex = gaps[after].toIndex
                gaps[before].toMs = gaps[after].toMs
                gaps[before].missing += gaps[after].missing
                gaps.remove(at: after)
            }
        } else if let after = gaps.firstIndex(where: { joins($0) && $0.fromIndex == gap.toIndex + 1 }) {
            gaps[after].fromIndex = gap.fromIndex
            gaps[after].fromMs = gap.fromMs
            gaps[after].missing += gap.missing
        } else {
            gaps.insert(gap, at: gaps.firstIndex { $0.fromMs > gap.fromMs } ?? gaps.endIndex)
        }
    }
}
