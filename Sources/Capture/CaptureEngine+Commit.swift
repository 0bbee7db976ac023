import GyroStore

extension CaptureEngine {
    /// Commits everything appended so far. When this returns, those samples are on disk.
    public func flush() async throws { try await commit() }

    func commit() async throws {
        while commitInFlight { await withCheckedContinuation { commitWaiters.append($0) } }
        commitInFlight = true
        defer {
            commitInFlight = false
            if !commitWaiters.isEmpty { commitWaiters.removeFirst().resume() }
        }
        collectOpenSessions()
        var changes = failed ?? StoreChanges()
        let samples = failedSamples + uncommittedSamples
        uncommittedSamples = 0
        changes.append(pending)
        pending = StoreChanges()
        pendingSince = nil
        failed = nil
        failedSamples = 0
        guard !changes.isEmpty else { return }
        do {
            try await store.commit(changes)
            counters.commits += 1
            counters.committedSamples += samples
            onCommit()
        } catch {
            failed = changes
            failedSamples = samples
            counters.failedCommits += 1
            logger.error("commit failed; it will be retried with the next one", metadata: ["subsystem": "capture", "error": "\(error)"])
            throw error
        }
    }

    /// Moves the uncommitted samples and dirty rows of open sessions into `pending`.
    private func collectOpenSessions() {
        for device in open.keys.sorted() {
            var session = open[device]!
            for (stream, var state) in session.streams where state.samples.count > state.queued {
                if state.queued == 0 || !pending.chunks.contains(where: { $0.id == state.chunk.id }) {
                    state.chunk.count = state.samples.count
                    state.chunk.startMs = state.samples.first?.timestampMs
                    state.chunk.endMs = state.samples.last?.timestampMs
                    pending.chunks.append(state.chunk)
                }
                pending.samples.append(SampleAppend(chunkId: state.chunk.id, offset: state.queued, samples: state.samples[state.queued...]))
                state.queued = state.samples.count
                session.streams[stream] = state
            }
            if session.documentsDirty {
                enqueue(&session)
            } else if session.rowDirty {
                pending.sessions.append(session.record)
                session.rowDirty = false
            }
            open[device] = session
        }
        // Session rows must precede their chunk rows in the transaction (foreign key).
    }

    // MARK: - Timer

    /// Commits on time and closes idle sessions until cancelled. Sleeps on a timer while
    /// sessions are open, and waits for the first sample while none is.
    public func run() async throws {
        while !Task.isCancelled {
            if open.isEmpty && pending.isEmpty {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { workWaiter = $0 }
                } onCancel: {
                    Task { await self.wakeRunLoop() }
                }
                continue
            }
            let wait = pendingSince.map { rules.commitInterval - (ContinuousClock.now - $0) } ?? rules.commitInterval
            try await Task.sleep(for: max(wait, .milliseconds(1)))
            try await closeIdleSessions()
            if let since = pendingSince, ContinuousClock.now - since >= rules.commitInterval { try await commit() }
        }
    }

    func wakeRunLoop() {
        workWaiter?.resume()
        workWaiter = nil
    }

    /// Closes sessions whose sensor has sent nothing for the idle timeout, at their last sample.
    public func closeIdleSessions() async throws {
        let current = now()
        for (device, session) in open {
            let last = session.record.lastSampleMs ?? session.record.startMs
            if current - last >= rules.idleTimeoutMs {
                try await stopSession(device: device, reason: "idle timeout")
            }
        }
    }
}

extension StoreChanges {
    mutating func append(_ other: StoreChanges) {
        sessions += other.sessions
        chunks += other.chunks
        samples += other.samples
        closedChunkIds += other.closedChunkIds
        documents += other.documents
        deletions += other.deletions
        deletedSessionIds += other.deletedSessionIds
    }

}
