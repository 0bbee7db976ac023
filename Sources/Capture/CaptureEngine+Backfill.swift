import GyroStore

extension CaptureEngine {
    /// The gaps of `stream` a backfill of `device` could fill: the open session's (committed or not)
    /// and those of sessions stored in the last `days` days, with their times on the timeline
    /// (the frame the sensors place logged samples in).
    public func fillableGaps(device: String, stream: SensorStream, days: Double = 7) async throws -> [GapRange] {
        let stored = try await store.fillableGaps(device: device, stream: stream.rawValue, sinceMs: now() - days * 86_400_000)
        let live = open[device]?.record.gaps.filter { $0.stream == stream.rawValue && $0.reason != .storeFull } ?? []
        return (stored + live.filter { !stored.contains($0) }).map { $0.shifted(by: -correctionMs) }
    }

    /// Fills the device's recorded gaps of `stream` with samples from the board's log
    /// (time-ordered, stamped on the host clock), as `GyroStore.backfill(device:stream:samples:sessionDocuments:chunkDocument:)`
    /// describes. When this returns, they are on disk.
    ///
    /// With the commit lock held: a stream's open chunk that lists a gap is closed first (its
    /// samples become a document a backfill can extend), and everything appended so far is
    /// committed, so the store holds every gap. Afterwards the engine's own copies of the sessions
    /// get the same changes, so later commits carry them on.
    @discardableResult
    public func backfill(device: String, stream: SensorStream, samples timelineSamples: [StoredSample]) async throws -> BackfillReport {
        guard !timelineSamples.isEmpty else { return BackfillReport() }
        if redatingInProgress { await waitWhileRedating() }
        let shift = correctionMs
        let samples = shift == 0 ? timelineSamples : timelineSamples.map { StoredSample(timestampMs: $0.timestampMs + shift, x: $0.x, y: $0.y, z: $0.z) }
        await lockCommits()
        defer { unlockCommits() }
        if var session = open.removeValue(forKey: device) {
            if var state = session.streams.removeValue(forKey: stream) {
                if !state.chunk.gaps.isEmpty, !state.samples.isEmpty {
                    let (seq, lastMs) = (state.chunk.seq, state.lastMs)
                    closeChunk(&state, session: &session)
                    state = newStream(stream, state.nextIndex, session.record, state.chunk.odrHz, state.chunk.range, seq: seq + 1)
                    state.lastMs = lastMs
                }
                session.streams[stream] = state
            }
            open[device] = session
        }
        try await commitLocked()
        let renderer = self.renderer
        let report = try await store.backfill(
            device: device, stream: stream.rawValue, samples: samples, chunkSize: rules.chunkSize,
            sessionDocuments: { renderer.sessionDocuments($0) },
            chunkDocument: { chunk, session, old, added in renderer.chunk(chunk, session: session, splicing: old, adding: added) },
            newChunk: { ChunkId.random() },
            newChunkDocument: { chunk, session, added in renderer.chunk(chunk, session: session, samples: added[...], backfilled: true) })
        for (sessionId, changes) in report.changes {
            if let device = open.first(where: { $0.value.record.id == sessionId })?.key {
                for change in changes { open[device]!.record.apply(change) }
                open[device]!.rowDirty = true
            }
            for index in pending.sessions.indices where pending.sessions[index].id == sessionId {
                for change in changes { pending.sessions[index].apply(change) }
            }
        }
        counters.backfilledSamples += report.filled
        counters.missingSamples -= report.filled
        if report.filled > 0 { onCommit() }
        return report
    }
}
