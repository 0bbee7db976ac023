import GyroStore
import HostTime

/// What a re-dating moves of a session this run dated: all of it when it started in this run.
/// A session continued from an earlier run (a crash, with backfill) was dated by that run up to
/// where this one took it over, so only what this run added moves: the samples after the first
/// `takenOver[chunk]` of the chunk it took over open, the chunks it made, the gaps from the
/// stream index it went on from.
struct RunSession: Sendable {
    var startedHere: Bool
    var takenOver: [String: Int] = [:]
    var chunksBefore: Set<String> = []
    var continuedFrom: [String: Int64] = [:]

    func moves(_ gap: GapRange) -> Bool { startedHere || gap.fromIndex >= (continuedFrom[gap.stream] ?? .min) }
    func moves(chunk id: String) -> Bool { startedHere || !chunksBefore.contains(id) || takenOver[id] != nil }
}

extension CaptureEngine {
    /// Moves everything this run dated by `redating.delta` and dates from now on as it says, in
    /// one transaction, so that a crash leaves the store before or after it, never between.
    ///
    /// Every session this run dated, open or closed, gets its times, gaps and chunks moved; a
    /// session whose start lands in another second gets the id that start calls for, its old
    /// `records` and `DailySessions` documents deleted (zero-byte retained publishes) and its
    /// documents published at the new paths; each moved chunk is published again with its
    /// points moved. An open session's open chunks close first (their samples in the sample
    /// ring were written in the old time), and its streams go on in new chunks. The board reset
    /// times this run saved move too. Then the users' medals are evaluated again from the true
    /// days. A re-dating with no delta only changes how the documents say they are dated.
    ///
    /// Meanwhile nothing else changes a session: appends, the feed and the session API wait
    /// (`waitWhileRedating()`), and the engine's copies of the open sessions are changed only
    /// between the re-dating's reads of the store, never across one.
    public func redate(_ redating: Redating) async throws {
        await waitWhileRedating()
        redatingInProgress = true
        defer {
            redatingInProgress = false
            for waiter in redatingWaiters { waiter.resume() }
            redatingWaiters.removeAll()
        }
        await lockCommits()
        defer { unlockCommits() }
        // What was taken in so far goes to the store as it was dated, and moves with the rest.
        try await commitLocked()
        let deltaMs = redating.delta * 1000
        correctionMs += deltaMs
        dating = redating.dating
        var users: Set<String> = []
        var taken: Set<String> = []
        for device in open.keys.sorted() {
            guard let record = open[device]?.record, let run = runSessions[record.id] else { continue }
            let moved = try await moved(record, run: run, by: deltaMs, taken: &taken)
            try await redateChunks(of: record.id, as: moved, run: run, by: deltaMs)
            guard var session = open.removeValue(forKey: device) else { continue }
            redateOpen(&session, as: moved, run: run, by: deltaMs)
            open[device] = session
            users.insert(record.userId)
        }
        let openIds = Set(open.values.map(\.record.id))
        for (id, run) in runSessions.sorted(by: { $0.key < $1.key }) where !openIds.contains(id) {
            guard let record = try await store.session(id: id) else {
                runSessions[id] = nil
                continue
            }
            try await redateStored(record, run: run, by: deltaMs, taken: &taken)
            users.insert(record.userId)
        }
        if deltaMs != 0 {
            for (device, times) in runResetTimes {
                for (resetUID, time) in times {
                    runResetTimes[device]![resetUID] = time + redating.delta
                    pending.resetTimes.append(BoardResetTime(device: device, resetUID: resetUID, resetTime: time + redating.delta))
                }
            }
        }
        try await commitLocked()
        counters.redatings += 1
        counters.redatedSessions += Int64(runSessions.count)
        logger.notice("sessions re-dated", metadata: ["subsystem": "capture", "sessions": "\(runSessions.count)",
                                                      "deltaMs": "\(deltaMs)", "dating": "\(dating.rawValue)", "reason": "\(redating.reason)"])
        for user in users.sorted() { try await reevaluateMedals(userId: user) }
    }

    /// An open session in memory: its record is `record` (moved), its samples move, its open
    /// chunks close. No suspension: the engine's copy of the session is never half moved.
    private func redateOpen(_ session: inout OpenSession, as record: SessionRecord, run: RunSession, by deltaMs: Double) {
        let oldId = session.record.id
        var record = record
        // What this session took in since `moved` read it (nothing while appends wait).
        record.samples = session.record.samples
        record.expected = session.record.expected
        record.chunkIds = session.record.chunkIds
        record.accelChunkIds = session.record.accelChunkIds
        session.record = record
        for (stream, var state) in session.streams {
            if deltaMs != 0 {
                let keep = run.takenOver[state.chunk.id] ?? (run.moves(chunk: state.chunk.id) ? 0 : state.samples.count)
                for index in state.samples.indices.dropFirst(keep) { state.samples[index].timestampMs += deltaMs }
                state.chunk.gaps = state.chunk.gaps.map { run.moves($0) ? $0.shifted(by: deltaMs) : $0 }
                state.lastMs = state.lastMs.map { $0 + deltaMs }
            }
            state.chunk.sessionId = record.id
            if deltaMs != 0, !state.samples.isEmpty {
                let (seq, lastMs) = (state.chunk.seq, state.lastMs)
                closeChunk(&state, session: &session)
                state = newStream(stream, state.nextIndex, session.record, state.chunk.odrHz, state.chunk.range, seq: seq + 1)
                state.lastMs = lastMs
            }
            session.streams[stream] = state
        }
        session.lastArrivalMs += deltaMs
        session.documentsDirty = true
        session.rowDirty = true
        rename(from: oldId, to: record)
    }

    /// A session closed earlier in this run: its row, documents and chunks.
    private func redateStored(_ stored: SessionRecord, run: RunSession, by deltaMs: Double, taken: inout Set<String>) async throws {
        let record = try await moved(stored, run: run, by: deltaMs, taken: &taken)
        try await redateChunks(of: stored.id, as: record, run: run, by: deltaMs)
        pending.sessions.append(record)
        pending.documents += renderer.sessionDocuments(record)
        rename(from: stored.id, to: record)
    }

    /// The record moved by `deltaMs`, dated as the engine dates now, under the id its start calls
    /// for (distinct from every other session's and from those `taken` by this re-dating).
    private func moved(_ record: SessionRecord, run: RunSession, by deltaMs: Double, taken: inout Set<String>) async throws -> SessionRecord {
        var moved = record
        moved.dating = dating
        guard deltaMs != 0 else { return moved }
        if run.startedHere {
            moved.startMs += deltaMs
            moved.localDate = calendar.localDate(epochMs: moved.startMs)
        }
        moved.endMs = moved.endMs.map { $0 + deltaMs }
        moved.lastSampleMs = moved.lastSampleMs.map { $0 + deltaMs }
        moved.gaps = moved.gaps.map { run.moves($0) ? $0.shifted(by: deltaMs) : $0 }
        if run.startedHere {
            moved.id = try await sessionId(userId: record.userId, startMs: moved.startMs, keeping: record.id, taken: taken)
        }
        taken.insert(moved.id)
        return moved
    }

    /// The stored chunks of session `oldId` that this run dated, moved and published again as
    /// chunks of `record` (a renamed session's chunk documents name it).
    private func redateChunks(of oldId: String, as record: SessionRecord, run: RunSession, by deltaMs: Double) async throws {
        guard deltaMs != 0 || record.id != oldId else { return }
        for var chunk in try await store.chunks(sessionId: oldId) where !chunk.isOpen {
            let moves = run.moves(chunk: chunk.id)
            guard moves || record.id != oldId else { continue }
            if moves { chunk = chunk.shifted(by: deltaMs, movesGap: run.moves) }
            chunk.sessionId = record.id
            pending.chunks.append(chunk)
            guard !chunk.pruned, let path = try? DocumentPaths.chunk(chunk.id), let body = try await store.storedBody(path) else { continue }
            let head = renderer.chunkHead(chunk, session: record)
            guard let redated = ChunkBody.redated(body, head: head, by: moves ? deltaMs : 0) else {
                logger.warning("a chunk in an older format is not re-dated", metadata: ["subsystem": "capture", "chunk": "\(chunk.id)"])
                continue
            }
            pending.documents.append(DocumentWrite(path: path, body: redated, retain: rules.retainChunks, device: record.device))
        }
    }

    /// Records a session's new id: its chunks follow it, its documents at the old paths go.
    private func rename(from oldId: String, to record: SessionRecord) {
        guard let run = runSessions.removeValue(forKey: oldId) else { return }
        runSessions[record.id] = run
        guard record.id != oldId else { return }
        pending.renames.append(SessionRename(from: oldId, to: record.id))
        if let path = try? DocumentPaths.record(oldId) { pending.deletions.append(path) }
        if let path = try? DocumentPaths.dailySession(userId: record.userId, sessionId: oldId) { pending.deletions.append(path) }
        logger.info("session renamed by a re-dating", metadata: ["subsystem": "capture", "from": "\(oldId)", "to": "\(record.id)"])
    }

    /// The id of a session of `userId` starting at `startMs`: `{userId}___{start s}`, with `_2`,
    /// `_3`, … when another session has it; `keeping` (the session's own id) is never another's.
    func sessionId(userId: String, startMs: Double, keeping: String? = nil, taken: Set<String> = []) async throws -> String {
        let base = "\(userId)___\(Int64((startMs / 1000).rounded(.down)))"
        var id = base
        var suffix = 1
        while id != keeping, try await isTaken(id, taken) {
            suffix += 1
            id = "\(base)_\(suffix)"
        }
        return id
    }

    private func isTaken(_ id: String, _ taken: Set<String>) async throws -> Bool {
        if taken.contains(id) || open.values.contains(where: { $0.record.id == id }) { return true }
        return try await store.session(id: id) != nil
    }

    /// Returns when no re-dating runs.
    func waitWhileRedating() async {
        while redatingInProgress { await withCheckedContinuation { redatingWaiters.append($0) } }
    }

    /// Medals again after a re-dating: what the user had when this run began, and what the
    /// sessions earn on their true days (what this run earned on wrong days is withdrawn).
    func reevaluateMedals(userId: String) async throws {
        let before = try await medalsBeforeRun(userId: userId)
        let sessions = try await store.sessions(userId: userId, chunkLists: false).filter { !$0.isOpen }
        let evaluated = Medals.evaluate(sessions.map { ($0.localDate, calendar.weekKey(epochMs: $0.startMs), $0.durationMs) }, calendar: calendar)
        let medals = before.union(evaluated)
        guard medals != (try await storedMedals(userId: userId)) else { return }
        medalCache[userId] = medals
        pending.documents.append(DocumentWrite(path: try DocumentPaths.medals(userId: userId), body: renderer.medals(medals), retain: true, device: nil))
        try await commitLocked()
    }

    /// The user's medals as this run first read them.
    func medalsBeforeRun(userId: String) async throws -> Medals {
        if let medals = medalsAtRunStart[userId] { return medals }
        let medals = try await storedMedals(userId: userId)
        medalsAtRunStart[userId] = medals
        return medals
    }
}
