import GyroStore

extension CaptureEngine {
    /// Runs the store's retention pass (`GyroStore.retentionBatch`), batch by batch. Chunks it
    /// evicts unpublished become `storeFull` gaps of their sessions, written with the eviction,
    /// records rendered here.
    ///
    /// Each batch holds the commit lock: no commit can write a session row read before the
    /// eviction over the one it wrote. After each batch the copies of those sessions this engine
    /// still holds (open sessions, and rows waiting for the next commit or retry) get the same
    /// change, so later commits carry the gaps on; then the lock is released and the engine
    /// suspends, so that a commit due meanwhile runs between two batches instead of after the
    /// whole pass (7 s at 2 GiB in one transaction, docs/benchmarks-store.md).
    ///
    /// The limit is the store's working limit: `maxBytes`, or less when the disk has less room.
    /// A pass that evicts unpublished data puts the store in the full state (the disk's room set
    /// the limit) or the at-limit one (`maxStoreBytes` did); see ``StoreCondition``. A pass that
    /// evicts none ends the at-limit state, and the full one once the disk has room again.
    @discardableResult
    public func enforceRetention() async throws -> RetentionReport {
        var pass = RetentionProgress(batchChunks: retentionBatchChunks)
        while !pass.isDone {
            await lockCommits()
            do { try await retentionBatchLocked(&pass) } catch {
                unlockCommits()
                if pass.report.evictedUnpublishedChunks > 0 { noteRetention(pass.report) }
                throw error
            }
            unlockCommits()
            guard !pass.isDone else { break }
            // The writer's thread is this engine's executor, and the batch ran on it without a
            // suspension: yielding lets what was queued meanwhile (the committer's alarm, a full
            // chunk's commit) run and take the lock before the next batch.
            if let observer = retentionBatchObserver { await observer(pass.report) } else { await Task.yield() }
        }
        noteRetention(pass.report)
        if pass.report.evictedUnpublishedChunks == 0 { checkSpaceReturned() }
        return pass.report
    }

    /// ``enforceRetention()`` for a caller that holds the commit lock (a commit that failed for
    /// want of space waits for the room anyway); the writer still takes other work between batches.
    func enforceRetentionLocked() async throws -> RetentionReport {
        var pass = RetentionProgress(batchChunks: retentionBatchChunks)
        while !pass.isDone { try await retentionBatchLocked(&pass) }
        noteRetention(pass.report)
        return pass.report
    }

    /// One batch of a pass, with the commit lock held; its evictions applied to this engine's copies.
    private func retentionBatchLocked(_ pass: inout RetentionProgress) async throws {
        let renderer = self.renderer
        let evictions = try await store.retentionBatch(&pass) { renderer.sessionDocuments($0) }
        // The evictions' session documents went into the outbox.
        if !evictions.isEmpty { onCommit() }
        for eviction in evictions {
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
    }

    /// Tests: called between two batches of ``enforceRetention()``, the commit lock free, with
    /// the pass's report so far (instead of the yield), so that a test can commit there.
    func observeRetentionBatches(chunks: Int, _ observer: (@Sendable (RetentionReport) async -> Void)?) {
        retentionBatchChunks = chunks
        retentionBatchObserver = observer
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
