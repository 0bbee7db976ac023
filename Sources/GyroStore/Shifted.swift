/// Records moved in time: what a re-dating does to the times a run dated (HostTime's `Redating`).
extension GapRange {
    /// The same gap, due `deltaMs` later.
    public func shifted(by deltaMs: Double) -> GapRange {
        var gap = self
        gap.fromMs += deltaMs
        gap.toMs += deltaMs
        return gap
    }
}

extension ChunkRecord {
    /// The same chunk `deltaMs` later; its gaps move when `movesGap` says so.
    public func shifted(by deltaMs: Double, movesGap: (GapRange) -> Bool = { _ in true }) -> ChunkRecord {
        var chunk = self
        chunk.startMs = startMs.map { $0 + deltaMs }
        chunk.endMs = endMs.map { $0 + deltaMs }
        chunk.gaps = gaps.map { movesGap($0) ? $0.shifted(by: deltaMs) : $0 }
        return chunk
    }
}

extension ChunkBody.Parts {
    /// The points `deltaMs` later, in the stored unit (thousandths of a millisecond), so that
    /// each point's text moves by exactly the same amount.
    public mutating func shift(by deltaMs: Double) {
        let delta = ChunkBody.scaled(deltaMs, places: ChunkBody.timePlaces)
        guard delta != 0, delta != ChunkBody.missing else { return }
        for index in points.indices where points[index].time != ChunkBody.missing { points[index].time += delta }
    }
}

extension ChunkBody {
    /// A stored chunk body with its points `deltaMs` later under a new `head`; `nil` for a body
    /// that is not in the compact form (JSON bodies of older gateways are never this run's).
    public static func redated(_ body: [UInt8], head: [UInt8], by deltaMs: Double) -> [UInt8]? {
        guard isCompact(body), var parts = decode(body) else { return nil }
        parts.head = head
        parts.shift(by: deltaMs)
        return encode(parts)
    }
}

extension GyroStore {
    /// A document's body as stored (a chunk's in its compact form), or `nil`.
    public func storedBody(_ path: DocumentPath) async throws(StoreError) -> [UInt8]? {
        try await read("reading \(path)") { db in
            try db.first("SELECT body FROM document WHERE path = ?", [path.rawValue]) { try $0.bytes(0) }
        }
    }
}
