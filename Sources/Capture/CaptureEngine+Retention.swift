import GyroStore

extension CaptureEngine {
    /// Runs the store's retention pass (`GyroStore.enforceRetention`). Chunks it evicts unpublished
    /// become `storeFull` gaps of their sessions, written with the eviction, records rendered here.
    ///
    /// The pass holds the commit lock: no commit can write a session row read before the
    /// eviction over the one it wrote. Afterwards the copies of those sessions this engine still
    /// holds (open sessions, and rows waiting for the next commit or retry) get the same change,
    /// so later commits carry the gaps on.
    ///
    /// The limit is the store's working limit: `maxBytes`, or less when the disk has less room.
    /// A pass that evicts unpublished data puts the store in the full state (the disk's room set
    /// the limit) or the at-limit one (`maxStoreBytes` did); see ``StoreCondition``. A pass that
    /// evicts none ends the at-limit state, and the full one once the disk has room again.
    @discardableResult
    public func enforceRetention() async throws -> RetentionReport {
        await lockCommits()
        defer { unlockCommits() }
        let report = try await enforceRetentionLocked()
        if report.evictedUnpublishedChunks == 0 { checkSpaceReturned() }
        return report
    }

    /// ``enforceRetention()`` for a caller that holds the commit lock.
    func enforceRetentionLocked() async throws -> RetentionReport {
        let renderer = self.renderer
        let report = try await store.enforceRetention { renderer.sessionDocuments($0) }
        noteRetention(report)
        // The evictions' session documents went into the outbox.
        if !report.evictions.isEmpty { onCommit() }
        for eviction in report.evictions {
            counters.missingSamples += eviction.samples
            counters.gaps += Int64(eviction.gaps.count)
            if let device = open.first(where: { $0.value.record.id == eviction.sessionId })?.key {
                // Its row and documents on disk have the gap already; the next commit's row keeps it.
                open[device]!.record.recordEviction(eviction)
                open[device]!.rowDirty = true
            }
            pending.recordEviction(eviction, renderer: renderer)
            failed?.recordEviction(eviction, renderer: renderer)
        }
        return report
    }
}

extension StoreChanges {
    /// Applies an eviction to the session rows queued here and renders their documents again.
    mutating func recordEviction(_ eviction: ChunkEviction, renderer: DocumentRenderer) {
        var latest: SessionRecord?
        for index in sessions.indices where sessions[index].id == eviction.sessionId {
            sessions[index].recordEviction(eviction)
            latest = sessions[index]
        }
        guard let latest else { return }
        let rendered = renderer.sessionDocuments(latest)
        for index in documents.indices {
            if let replacement = rendered.first(where: { $0.path == documents[index].path }) { documents[index] = replacement }
        }
    }
}
