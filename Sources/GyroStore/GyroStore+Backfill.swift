import FoundationEssentials

/// What a backfill changed.
public struct BackfillReport: Sendable, Equatable {
    /// Samples stored into gaps.
    public var filled: Int64 = 0
    /// Gaps filled completely.
    public var gapsClosed = 0
    /// Gaps the samples reached but could not fill: their chunk was pruned after publication, or is
    /// still open.
    public var gapsSkipped = 0
    /// Per session: each gap that changed, and what is left of it.
    public var changes: [String: [GapChange]] = [:]
    /// The sessions as written.
    public var sessions: [SessionRecord] = []

    public init() {}

    public struct GapChange: Sendable, Equatable {
        public var gap: GapRange
        public var remaining: [GapRange]
        public var filled: Int64
        /// New chunks that hold the filled samples (when the gap's chunk had no room for them),
        /// in time order, listed in the session next to `nextTo`: after it when it starts before
        /// them (its samples before the gap), else before it, so the list stays in order of start.
        public var newChunkIds: [String] = []
        public var nextTo: String = ""
        public var after = false
    }
}

extension SessionRecord {
    /// Replaces `change.gap` by what is left of it, counting the samples that filled it.
    public mutating func apply(_ change: BackfillReport.GapChange) {
        guard let at = gaps.firstIndex(of: change.gap) else { return }
        gaps.replaceSubrange(at...at, with: change.remaining)
        samples += change.filled
        guard !change.newChunkIds.isEmpty else { return }
        let stream = change.gap.stream == "gyro"
        let ids = stream ? chunkIds : accelChunkIds
        let insert = ids.firstIndex(of: change.nextTo).map { change.after ? $0 + 1 : $0 } ?? ids.endIndex
        if stream { chunkIds.insert(contentsOf: change.newChunkIds, at: insert) } else { accelChunkIds.insert(contentsOf: change.newChunkIds, at: insert) }
    }
}

extension GyroStore {
    /// Fills the device's recorded gaps of `stream` with `samples` (time-ordered, from the board's
    /// log), in one transaction.
    ///
    /// Each gap is filled in the chunk that lists it (the chunk holding the first sample after it),
    /// which must be closed and still hold its document: `chunkDocument` renders the document again
    /// with the new points (a new version of the same path, so subscribers converge), the chunk row
    /// and the session row and documents (`sessionDocuments`) are rewritten with the gap replaced by
    /// what is left of it (see ``GapFill``). `storeFull` gaps are not filled: those samples were
    /// evicted by retention, which a backfill must not undo.
    ///
    /// When the chunk has no room for them (it would exceed `chunkSize` points), the filled samples
    /// become new chunks of at most `chunkSize` instead (`newChunk` makes the id and the document),
    /// listed in the session next to it in order of their first samples; each lists the remaining
    /// gaps that precede it.
    public func backfill(
        device: String, stream: String, samples: [StoredSample], chunkSize: Int = .max,
        sessionDocuments: @escaping @Sendable (SessionRecord) -> [DocumentWrite],
        chunkDocument: @escaping @Sendable (ChunkRecord, SessionRecord, [UInt8], [StoredSample]) -> [UInt8]?,
        newChunk: @escaping @Sendable () -> String,
        newChunkDocument: @escaping @Sendable (ChunkRecord, SessionRecord, [StoredSample]) -> [UInt8]
    ) async throws(StoreError) -> BackfillReport {
        guard let firstMs = samples.first?.timestampMs, let lastMs = samples.last?.timestampMs else { return BackfillReport() }
        let renderers = BackfillPass.Renderers(sessionDocuments: sessionDocuments, chunkDocument: chunkDocument,
                                               newChunk: newChunk, newChunkDocument: newChunkDocument)
        do {
            return try await write { db in
                var pass = BackfillPass(db: db, stream: stream, samples: samples, window: firstMs...lastMs, chunkSize: chunkSize,
                                        renderers: renderers, now: Date().timeIntervalSince1970)
                // Summaries: a session's lists are read only if a gap of it is filled. Not a session
                // this gateway released to the fleet (not open, no end): another one writes it now.
                for session in try SessionRecord.read(db, """
                    WHERE device = ? COLLATE NOCASE AND gaps != '[]' AND startMs <= ? AND (isOpen = 1 OR endMs IS NOT NULL)
                    ORDER BY startMs
                    """, [device, lastMs + 60_000], lists: false) {
                    try pass.fill(session)
                }
                return pass.report
            }
        } catch {
            throw .wrapping(error, context: "backfilling \(samples.count) logged samples of \(device)")
        }
    }
}

extension GyroStore {
    /// Host time (epoch s) at which each power cycle (`reset_uid`) of `device` began, as last read.
    public func boardResetTimes(device: String) async throws(StoreError) -> [UInt8: Double] {
        try await read("reading the board's reset times") { db in
            var times: [UInt8: Double] = [:]
            try db.statement("SELECT resetUID, resetTime FROM boardResetTime WHERE device = ?").forEachRow([device]) { row in
                times[UInt8(truncatingIfNeeded: try row.int64(0))] = try row.double(1)
                return true
            }
            return times
        }
    }

    public func saveBoardResetTime(device: String, resetUID: UInt8, resetTime: Double) async throws(StoreError) {
        do {
            try await write { db in
                try db.run("INSERT OR REPLACE INTO boardResetTime (device, resetUID, resetTime) VALUES (?, ?, ?)",
                           [device, Int(resetUID), resetTime])
            }
        } catch {
            throw .wrapping(error, context: "saving the board's reset time")
        }
    }
}

extension GyroStore {
    /// The time spans (epoch ms) of `device`'s gaps of `stream` that a backfill could fill, in
    /// sessions started since `sinceMs` that this gateway writes: what a log download needs to keep.
    public func fillableGaps(device: String, stream: String, sinceMs: Double) async throws(StoreError) -> [GapRange] {
        try await read("reading the gaps to backfill") { db in
            try db.all("""
                SELECT gaps FROM session WHERE device = ? COLLATE NOCASE AND gaps != '[]' AND startMs >= ?
                    AND (isOpen = 1 OR endMs IS NOT NULL)
                """, [device, sinceMs]) {
                try JSONColumn.gaps(try $0.optionalText(0))
            }
                .flatMap { $0 }.filter { $0.stream == stream && $0.reason != .storeFull }
        }
    }
}
