import FoundationEssentials

/// One backfill's work inside its transaction (``GyroStore/backfill(device:stream:samples:chunkSize:sessionDocuments:chunkDocument:newChunk:newChunkDocument:)``):
/// for each session, each fillable gap is filled into the chunk that lists it, or into new
/// chunks beside it when that chunk has no room; then the session is written once.
struct BackfillPass {
    /// What renders the documents: capture's, which the store does not know.
    struct Renderers {
        var sessionDocuments: @Sendable (SessionRecord) -> [DocumentWrite]
        var chunkDocument: @Sendable (ChunkRecord, SessionRecord, [UInt8], [StoredSample]) -> [UInt8]?
        var newChunk: @Sendable () -> String
        var newChunkDocument: @Sendable (ChunkRecord, SessionRecord, [StoredSample]) -> [UInt8]
    }

    /// A gap's chunk, closed and still holding its document.
    struct Target {
        var chunk: ChunkRecord
        var path: DocumentPath
        var body: [UInt8]
        var retained: Bool
    }

    let db: SQLiteConnection
    let stream: String
    let samples: [StoredSample]
    /// The logged samples' first and last times (epoch ms).
    let window: ClosedRange<Double>
    let chunkSize: Int
    let renderers: Renderers
    let now: Double
    var report = BackfillReport()

    /// Fills what it can of `session`'s gaps, and writes the session and its documents if any changed.
    mutating func fill(_ session: SessionRecord) throws {
        var session = session
        var changed = false
        // A second either side: the log's stamps and the stream's differ by a millisecond or two.
        for gap in session.gaps where gap.stream == stream && gap.reason != .storeFull
            && gap.toMs + 1000 >= window.lowerBound && gap.fromMs - 1000 <= window.upperBound {
            guard let target = try target(of: gap, in: session) else { continue }
            let plan = GapFill(gap: gap, periodMs: 1000 / target.chunk.odrHz, samples: samples)
            guard !plan.filled.isEmpty, target.chunk.gaps.contains(gap) else { continue }
            let change = if target.chunk.count + plan.filled.count > chunkSize {
                try addChunks(plan, for: gap, beside: target, in: &session)
            } else {
                try splice(plan, into: target, for: gap, in: &session)
            }
            if !change.newChunkIds.isEmpty { try SessionRecord.listInherited(change, sessionId: session.id, db) }
            report.filled += change.filled
            if change.remaining.isEmpty { report.gapsClosed += 1 }
            report.changes[session.id, default: []].append(change)
            changed = true
        }
        guard changed else { return }
        // Its lists as the chunk table now has them, new chunks in place.
        try session.readChunkLists(db)
        try session.upsert(db)
        for document in renderers.sessionDocuments(session) { try GyroStore.write(document, at: now, in: db) }
        report.sessions.append(session)
    }

    /// The chunk that lists `gap` (the one holding the first sample after it), when it can take
    /// samples: closed, its document still there. Counted as skipped when it cannot.
    mutating func target(of gap: GapRange, in session: SessionRecord) throws -> Target? {
        guard let chunk = try db.all("""
            SELECT \(ChunkRecord.columns) FROM chunk WHERE sessionId = ? AND stream = ? AND gaps != '[]'
            """, [session.id, stream], ChunkRecord.init(row:)).first(where: { $0.gaps.contains(gap) })
        else { return nil }
        let path = try DocumentPath.chunk(chunk.id)
        guard !chunk.isOpen, !chunk.pruned,
              let stored = try db.first("SELECT body, retained FROM document WHERE path = ?", [path.rawValue], {
                  (body: try $0.bytes(0), retained: try $0.bool(1))
              })
        else {
            report.gapsSkipped += 1
            return nil
        }
        return Target(chunk: chunk, path: path, body: stored.body, retained: stored.retained)
    }

    /// The filled samples go into the gap's own chunk, merged by time.
    func splice(_ plan: GapFill, into target: Target, for gap: GapRange, in session: inout SessionRecord) throws -> BackfillReport.GapChange {
        var chunk = target.chunk
        let change = BackfillReport.GapChange(gap: gap, remaining: plan.remaining, filled: Int64(plan.filled.count))
        let at = chunk.gaps.firstIndex(of: gap)!  // `fill` checked that the chunk lists it
        chunk.gaps.replaceSubrange(at...at, with: plan.remaining)
        chunk.count += plan.filled.count
        chunk.firstIndex = min(chunk.firstIndex, plan.filled.first!.index)
        chunk.startMs = min(chunk.startMs ?? .infinity, plan.filled.first!.sample.timestampMs)
        chunk.endMs = max(chunk.endMs ?? -.infinity, plan.filled.last!.sample.timestampMs)
        session.apply(change)
        try rewrite(chunk, of: target, session: session, adding: plan.filled.map(\.sample))
        return change
    }

    /// The gap's chunk has no room: the filled samples become new chunks of at most `chunkSize`
    /// beside it, each listing the remaining gaps that precede it; the gap's chunk keeps those after.
    func addChunks(_ plan: GapFill, for gap: GapRange, beside target: Target, in session: inout SessionRecord) throws -> BackfillReport.GapChange {
        var chunk = target.chunk
        var change = BackfillReport.GapChange(gap: gap, remaining: plan.remaining, filled: Int64(plan.filled.count))
        change.nextTo = chunk.id
        change.after = (chunk.startMs ?? .infinity) < plan.filled.first!.sample.timestampMs
        var left = plan.remaining
        var start = 0
        while start < plan.filled.count {
            let piece = plan.filled[start..<min(start + max(1, chunkSize), plan.filled.count)]
            start = piece.endIndex
            var fresh = ChunkRecord(id: renderers.newChunk(), sessionId: session.id, stream: stream, seq: chunk.seq,
                                    odrHz: chunk.odrHz, range: chunk.range, firstIndex: piece.first!.index)
            fresh.count = piece.count
            fresh.startMs = piece.first!.sample.timestampMs
            fresh.endMs = piece.last!.sample.timestampMs
            fresh.isOpen = false
            fresh.gaps = left.filter { $0.toIndex < piece.first!.index }
            left.removeAll { $0.toIndex < piece.first!.index }
            try fresh.upsert(db)
            let body = renderers.newChunkDocument(fresh, session, piece.map(\.sample))
            try GyroStore.write(DocumentWrite(path: try DocumentPath.chunk(fresh.id), body: body, retain: target.retained,
                                              device: session.device), at: now, in: db)
            change.newChunkIds.append(fresh.id)
        }
        let at = chunk.gaps.firstIndex(of: gap)!  // `fill` checked that the chunk lists it
        chunk.gaps.replaceSubrange(at...at, with: left)
        session.apply(change)
        try rewrite(chunk, of: target, session: session, adding: [])
        return change
    }

    /// The gap's chunk and a new version of its document, its published points kept as they were.
    func rewrite(_ chunk: ChunkRecord, of target: Target, session: SessionRecord, adding added: [StoredSample]) throws {
        guard let rendered = renderers.chunkDocument(chunk, session, target.body, added) else {
            throw StoreError.database(context: "backfilling chunk \(chunk.id)", reason: "its document could not be read back")
        }
        try chunk.upsert(db)
        try GyroStore.write(DocumentWrite(path: target.path, body: rendered, retain: target.retained, device: session.device), at: now, in: db)
    }
}
