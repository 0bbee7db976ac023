import GyroStore

extension CaptureEngine {
    /// Commits everything appended so far. When this returns, those samples are on disk.
    public func flush() async throws { try await commit() }

    func commit() async throws {
        await lockCommits()
        defer { unlockCommits() }
        try await commitLocked()
    }

    /// Waits until no commit (nor anything else that holds the lock) is in flight, then holds it.
    ///
    /// First come, first served: `unlockCommits` hands the lock to the oldest waiter. Why: a
    /// retention pass takes the lock again right after each of its batches; were the lock only
    /// released, the pass (running on without a suspension) would take it before the woken
    /// commit could, and capture would wait for the whole pass.
    func lockCommits() async {
        if commitInFlight {
            // Resumed by `unlockCommits`, which leaves `commitInFlight` set: the lock is ours.
            await withCheckedContinuation { commitWaiters.append($0) }
            return
        }
        commitInFlight = true
    }

    func unlockCommits() {
        if commitWaiters.isEmpty { commitInFlight = false } else { commitWaiters.removeFirst().resume() }
    }

    /// `commit()` for a caller that holds the lock.
    func commitLocked() async throws {
        if storeCondition.isFull { await makeRoom() }
        var (changes, samples) = takeChanges()
        guard !changes.isEmpty else { return }
        do {
            try await commitNow(changes, samples: samples)
        } catch let error as StoreError where error.isFull {
            // Kept as failed while room is made, so that evictions update its session rows.
            keepFailed(changes, samples: samples, error: error)
            await storeFilled(error)
            (changes, samples) = takeChanges()
            do { try await commitNow(changes, samples: samples) } catch {
                keepFailed(changes, samples: samples, error: error)
                throw error
            }
        } catch {
            keepFailed(changes, samples: samples, error: error)
            throw error
        }
    }

    /// Everything to commit now: a failed commit's changes first, then what came since.
    private func takeChanges() -> (StoreChanges, Int64) {
        collectOpenSessions()
        var changes = failed ?? StoreChanges()
        let samples = failedSamples + uncommittedSamples
        uncommittedSamples = 0
        changes.append(pending)
        pending = StoreChanges()
        pendingSince = nil
        closedChunksPending = 0
        failed = nil
        failedAt = nil
        failedSamples = 0
        return (changes, samples)
    }

    private func commitNow(_ changes: StoreChanges, samples: Int64) async throws {
        try await store.commit(changes)
        counters.commits += 1
        counters.committedSamples += samples
        checkSpaceReturned()
        // Most commits only append samples to open chunks: waking the publisher for them would
        // cost it a read of the outbox (a reader thread's wake-up and the writer's after it)
        // that finds nothing.
        if changes.addsOutboxRows { onCommit() }
    }

    private func keepFailed(_ changes: StoreChanges, samples: Int64, error: any Error) {
        failed = changes
        failedAt = .now
        failedSamples = samples
        counters.failedCommits += 1
        logger.error("commit failed; it will be retried with the next one", metadata: ["subsystem": "capture", "error": "\(error)"])
    }

    /// Moves the uncommitted samples and dirty rows of open sessions into `pending`.
    private func collectOpenSessions() {
        for device in open.keys.sorted() {
            var session = open[device]!
            for (stream, var state) in session.streams where state.samples.count > state.queued {
                // The row is written with its first samples (recovery finds the chunk by it).
                if state.rowDirty {
                    state.chunk.count = state.samples.count
                    state.chunk.startMs = state.samples.first?.timestampMs
                    state.chunk.endMs = state.samples.last?.timestampMs
                    pending.chunks.append(state.chunk)
                    state.rowDirty = false
                }
                pending.samples.append(SampleAppend(chunkId: state.chunk.id, offset: state.queued, samples: state.samples[state.queued...],
                                                    unitsPerLSB: stream.unitsPerLSB(range: state.chunk.range)))
                state.queued = state.samples.count
                session.streams[stream] = state
            }
            if session.documentsDirty || documentsDue(session) {
                enqueue(&session)
            } else if session.rowDirty {
                pending.sessions.append(session.record)
                session.rowDirty = false
            }
            open[device] = session
        }
        // Session rows must precede their chunk rows in the transaction (foreign key).
    }

    // MARK: - Committer

    /// Commits full chunks as they come and everything else on time, and closes idle
    /// sessions, until cancelled. It sleeps until its next deadline (the oldest uncommitted
    /// sample's commit, a failed commit's retry, an open session's idle timeout) or until woken:
    /// by ``feed`` when an empty feed gets its first samples, by `append` when a chunk fills or
    /// the first uncommitted samples come in. With nothing pending it sleeps without a deadline,
    /// so an idle gateway does not wake every commit interval. While samples stream, the
    /// feed's wake-up is off and the alarm is set one interval after each commit instead
    /// (`earlyCommit`).
    ///
    /// The writer's thread is also the task's executor preference: a wake-up resumes the stream's
    /// consumer on that thread, not on the global executor (a dispatch worker that would then
    /// hop to the engine's thread).
    public func run() async throws {
        await withTaskExecutorPreference(store.writerExecutor) { await commitLoop() }
    }

    private func commitLoop() async {
        let (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        commitSignal = signal
        feed.setWake { signal.yield() }
        // Two alarms, so that the idle timeout (minutes away, moved by every sample) does not
        // replace the commit's alarm every second, nor the other way round.
        var commitAlarm = CommitAlarm(signal: signal, executor: store.writerExecutor)
        var idleAlarm = CommitAlarm(signal: signal, executor: store.writerExecutor)
        defer {
            feed.setWake(nil)
            commitAlarm.cancel()
            idleAlarm.cancel()
            commitSignal = nil
            signal.finish()
        }
        commitAlarm.set(nextCommitDeadline())
        idleAlarm.set(nextIdleDeadline())
        // While samples stream: when the next commit is expected. The feed's wake is off
        // meanwhile (see `earlyCommit`).
        var expected: ContinuousClock.Instant?
        for await _ in signals {
            if Task.isCancelled { break }
            let early = expected == nil ? .zero : earlyCommit
            let due = [nextCommitDeadline(), nextIdleDeadline()].compactMap { $0 }.min()
            let committed = counters.committedSamples
            if let due, due <= .now + early { await commitWhatIsDue(early: early) }
            if counters.committedSamples > committed {
                // Samples are coming: the next commit is due about one interval from now, and
                // the alarm set for then replaces the feed's wake-up for the first of them.
                if expected == nil { feed.setWake(nil) }
                expected = .now + rules.commitInterval
            } else if let since = expected, since <= .now, nextCommitDeadline(forDocuments: false) == nil {
                // Nothing came within an interval: the stream paused; the feed wakes us again.
                // Set before looking at the deadlines below, so that samples arriving meanwhile
                // are either seen there or wake us.
                expected = nil
                feed.setWake { signal.yield() }
            }
            // While the feed's wake is off, the alarm must ring by the expected commit even when
            // nothing is pending now (a commit made by someone else took it): otherwise nothing
            // would wake the committer for the samples that follow.
            let expecting = expected.flatMap { $0 > .now ? $0 : nil }
            commitAlarm.set([nextCommitDeadline(), expecting].compactMap { $0 }.min())
            idleAlarm.set(nextIdleDeadline())
        }
    }

    /// How much earlier than its deadline a commit may happen while samples stream.
    ///
    /// Why: a commit's deadline counts from its oldest sample's arrival, which comes a read
    /// interval or so after the previous commit. Waiting for exactly that deadline needs the
    /// feed to wake the committer for the first samples after each commit (a wake-up of this
    /// thread per commit) and then a second alarm. Committing at the previous commit's schedule,
    /// up to this much early, needs one alarm per commit; committing early loses nothing.
    var earlyCommit: Duration { rules.commitInterval / 4 }

    /// When the next commit is due, if anything waits for one. Without `forDocuments`, only what
    /// samples and failed commits need: an open session's paced documents do not mean that the
    /// stream goes on (the committer must not keep the feed's wake-up off for them).
    func nextCommitDeadline(forDocuments: Bool = true) -> ContinuousClock.Instant? {
        if closedChunksPending > 0 { return .now }
        var deadlines: [ContinuousClock.Instant] = []
        if let since = [pendingSince, feed.oldest].compactMap({ $0 }).min() { deadlines.append(since + rules.commitInterval) }
        if let failedAt { deadlines.append(failedAt + rules.commitInterval) }
        if forDocuments { deadlines += open.values.compactMap(documentsDeadline) }
        return deadlines.min()
    }

    /// When the first open session reaches its idle timeout, if one is open.
    func nextIdleDeadline() -> ContinuousClock.Instant? {
        guard let lastArrival = open.values.lazy.map(\.lastArrivalMs).min() else { return nil }
        let remaining = max(0, lastArrival + rules.idleTimeoutMs - now())
        return .now + .milliseconds(Int64(remaining.rounded(.up)))
    }

    /// A failed commit is logged and kept by `commit()`; the committer retries it a commit
    /// interval later.
    ///
    /// It takes in the feed itself rather than through ``ingestFeed()``'s task: nothing on that
    /// path stops at a cancellation, and awaiting a task's value resumes the committer through
    /// the global executor (a dispatch worker's wake-up, then this thread's).
    func commitWhatIsDue(early: Duration = .zero) async {
        await ingestFeedUncancelled()
        let due = pendingSince.map { ContinuousClock.now - $0 >= rules.commitInterval - early } ?? false
        let retry = failedAt.map { ContinuousClock.now - $0 >= rules.commitInterval } ?? false
        let documents = open.values.contains(where: documentsDue)
        if closedChunksPending > 0 || due || retry || documents { try? await commit() }
        try? await closeIdleSessions()
    }

    /// Closes sessions whose sensor has sent nothing for the idle timeout (host clock), at their last sample.
    public func closeIdleSessions() async throws {
        let current = now()
        for (device, session) in open {
            if current - session.lastArrivalMs >= rules.idleTimeoutMs {
                try await stopSession(device: device, reason: "idle timeout")
            }
        }
    }
}

extension CaptureEngine {
    /// Takes in what the data plane left in ``feed``, in order: samples are appended (a failed
    /// append is logged; its samples stay counted as missing by the sensor's stream), button
    /// presses start or stop sessions. Runs one at a time; a caller that finds one running
    /// waits for it and then takes in what came meanwhile. A caller's cancellation (a sensor's
    /// run ending at shutdown) does not cut it short: samples taken from the feed are stored.
    public func ingestFeed() async {
        await Task { await self.ingestFeedUncancelled() }.value
    }

    func ingestFeedUncancelled() async {
        while ingesting { await withCheckedContinuation { ingestWaiters.append($0) } }
        ingesting = true
        defer {
            ingesting = false
            if !ingestWaiters.isEmpty { ingestWaiters.removeFirst().resume() }
        }
        for item in feed.take() {
            switch item {
            case .samples(let run):
                do {
                    try await append(sensor: run.sensor, stream: run.stream, odrHz: run.odrHz, range: run.range,
                                     firstIndex: run.firstIndex, samples: run.samples,
                                     gapReason: run.gapReason ?? .notReceived, receivedAt: run.receivedAt)
                } catch {
                    logger.error("capture append failed", metadata: ["subsystem": "capture", "device": "\(run.sensor.device)",
                                                                     "error": "\(error)"])
                }
            case .toggleSession(let sensor, let timelineMs):
                let atMs = timelineMs + correctionMs
                do {
                    if open[sensor.device] != nil {
                        _ = try await stopSession(device: sensor.device, atMs: atMs, reason: "button")
                        logger.notice("session stopped by button", metadata: ["subsystem": "capture", "device": "\(sensor.device)"])
                    } else {
                        _ = try await startSession(sensor: sensor, atMs: atMs)
                        logger.notice("session started by button", metadata: ["subsystem": "capture", "device": "\(sensor.device)"])
                    }
                } catch {
                    logger.error("button session change failed", metadata: ["subsystem": "capture", "error": "\(error)"])
                }
            }
        }
    }
}
