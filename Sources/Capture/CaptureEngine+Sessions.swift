import GyroStore
import JSON

extension CaptureEngine {
    /// Starts a session for a sensor, or returns the one already open.
    @discardableResult
    public func startSession(sensor: SensorIdentity, atMs: Double? = nil) async throws -> SessionRecord {
        if redatingInProgress { await waitWhileRedating() }
        if let existing = open[sensor.device] { return existing.record }
        let startMs = atMs ?? now()
        // Two sessions of one user in the same second (a split, a quick restart) keep distinct ids.
        let id = try await sessionId(userId: sensor.userId, startMs: startMs)
        var record = SessionRecord(id: id, userId: sensor.userId, device: sensor.device, startMs: startMs,
                                   localDate: calendar.localDate(epochMs: startMs))
        record.dating = dating
        open[sensor.device] = OpenSession(record: record, arrivalMs: now())
        runSessions[id] = RunSession(startedHere: true)
        commitSignal?.yield()  // its idle timeout is a deadline of the committer's
        counters.sessionsStarted += 1
        logger.info("session started", metadata: ["subsystem": "capture", "session": "\(id)", "device": "\(sensor.device)"])
        try await commit()
        return record
    }

    /// Closes a sensor's session: its partial chunks become documents, `end` is `atMs` or the
    /// last sample, and the user's medals are re-evaluated.
    ///
    /// With `withdrawIfEmpty`, a session that never stored a sample nor expected one is withdrawn
    /// instead: its row is deleted and its `records` and `DailySessions` documents are cleared
    /// downstream with zero-byte retained publishes. ``recover(continuing:)`` does this for sessions a crash
    /// left open before their first samples were committed, so that no empty session is left
    /// looking like a real one; a session an operator or a button started and stopped stays.
    /// The record is returned closed either way.
    @discardableResult
    public func stopSession(device: String, atMs: Double? = nil, reason: String = "stopped",
                            withdrawIfEmpty: Bool = false) async throws -> SessionRecord {
        if redatingInProgress { await waitWhileRedating() }
        guard var session = open.removeValue(forKey: device) else { throw CaptureError.noSessionForDevice(device) }
        if withdrawIfEmpty, session.record.expected == 0, session.streams.values.allSatisfy({ $0.samples.isEmpty }),
           session.record.chunkIds.isEmpty, session.record.accelChunkIds.isEmpty {
            session.record.endMs = atMs ?? session.record.startMs
            session.record.isOpen = false
            pending.deletions.append(try DocumentPaths.record(session.record.id))
            pending.deletions.append(try DocumentPaths.dailySession(userId: session.record.userId, sessionId: session.record.id))
            pending.deletedSessionIds.append(session.record.id)
            counters.sessionsWithdrawn += 1
            logger.info("session withdrawn: it stored no sample", metadata: ["subsystem": "capture", "session": "\(session.record.id)",
                                                                           "reason": "\(reason)"])
            try await commit()
            return session.record
        }
        for stream in SensorStream.allCases {
            guard var state = session.streams[stream] else { continue }
            closeChunk(&state, session: &session)
        }
        session.record.endMs = atMs ?? session.record.lastSampleMs ?? session.record.startMs
        session.record.isOpen = false
        enqueue(&session)
        counters.sessionsClosed += 1
        logger.info("session closed", metadata: ["subsystem": "capture", "session": "\(session.record.id)", "reason": "\(reason)",
                                                 "samples": "\(session.record.samples)", "missing": "\(session.record.expected - session.record.samples)"])
        try await commit()
        try await updateMedals(userId: session.record.userId)
        return session.record
    }

    public func stopSession(id: String, atMs: Double? = nil) async throws -> SessionRecord {
        if let device = open.first(where: { $0.value.record.id == id })?.key {
            return try await stopSession(device: device, atMs: atMs)
        }
        guard let record = try await store.session(id: id) else { throw CaptureError.unknownSession(id) }
        return record
    }

    /// Merges hazard intensities into a session's `hazards` (a name given again is replaced).
    public func mergeHazards(sessionId: String, _ hazards: [String: Int]) async throws -> SessionRecord {
        if redatingInProgress { await waitWhileRedating() }
        for (name, intensity) in hazards {
            if name.isEmpty || name.count > 64 { throw CaptureError.invalidHazard(name: name, reason: "names are 1 to 64 characters") }
            if intensity < 0 { throw CaptureError.invalidHazard(name: name, reason: "intensity must not be negative") }
        }
        if let device = open.first(where: { $0.value.record.id == sessionId })?.key {
            open[device]!.record.hazards.merge(hazards) { $1 }
            open[device]!.documentsDirty = true
            open[device]!.rowDirty = true
            try await commit()
            return open[device]!.record
        }
        // Read, change and write the row with no commit (nor retention pass) in between,
        // so that this write cannot undo one.
        await lockCommits()
        defer { unlockCommits() }
        guard var record = try await store.session(id: sessionId) else { throw CaptureError.unknownSession(sessionId) }
        record.hazards.merge(hazards) { $1 }
        var closed = OpenSession(record: record, arrivalMs: now())
        enqueue(&closed)
        try await commitLocked()
        return record
    }

    /// Removes a session and its documents locally and, through zero-byte retained publishes,
    /// downstream. Medals already earned stay.
    public func deleteSession(id: String) async throws {
        if redatingInProgress { await waitWhileRedating() }
        if let device = open.first(where: { $0.value.record.id == id })?.key {
            _ = try await stopSession(device: device)
        }
        guard let record = try await store.session(id: id) else { throw CaptureError.unknownSession(id) }
        pending.deletions.append(try DocumentPaths.record(id))
        pending.deletions.append(try DocumentPaths.dailySession(userId: record.userId, sessionId: id))
        for chunk in record.chunkIds + record.accelChunkIds { pending.deletions.append(try DocumentPaths.chunk(chunk)) }
        pending.deletedSessionIds.append(id)
        try await commit()
    }

    /// Closes the sessions a crash left open, at their last stored sample; one that stored no
    /// sample at all is withdrawn (see ``stopSession(device:atMs:reason:withdrawIfEmpty:)``).
    /// The sessions of `continuing` devices (whose boards log their stream, so the hole the crash
    /// made can be filled from the log) stay open instead: their streams go on after their last
    /// stored sample (``continuation(device:stream:)``). Returns the sessions it closed.
    public func recover(continuing: Set<String> = []) async throws -> [SessionRecord] {
        var closed: [SessionRecord] = []
        let continuing = Set(continuing.map { $0.uppercased() })
        for record in try await store.openSessions() where open[record.device] == nil {
            var session = OpenSession(record: record, arrivalMs: now())
            for chunk in try await store.openChunks(sessionId: record.id) {
                guard let stream = SensorStream(rawValue: chunk.stream) else { continue }
                var state = StreamState(chunk: chunk, capacity: rules.chunkSize)
                state.samples = try await store.samples(ofChunk: chunk.id)
                state.queued = state.samples.count
                if let last = state.samples.last?.timestampMs {
                    session.record.lastSampleMs = max(session.record.lastSampleMs ?? last, last)
                }
                session.streams[stream] = state
            }
            if continuing.contains(record.device.uppercased()) {
                try await continueStreams(&session)
                runSessions[record.id] = RunSession(
                    startedHere: false,
                    takenOver: Dictionary(session.streams.values.map { ($0.chunk.id, $0.samples.count) }, uniquingKeysWith: max),
                    chunksBefore: Set(try await store.chunks(sessionId: record.id).map(\.id)),
                    continuedFrom: Dictionary(session.streams.map { ($0.key.rawValue, $0.value.nextIndex) }, uniquingKeysWith: min))
                open[record.device] = session
                logger.warning("continuing a session left open by an earlier run", metadata: ["subsystem": "capture", "session": "\(record.id)"])
                continue
            }
            open[record.device] = session
            logger.warning("closing a session left open by an earlier run", metadata: ["subsystem": "capture", "session": "\(record.id)"])
            closed.append(try await stopSession(device: record.device, reason: "recovered after restart", withdrawIfEmpty: true))
        }
        return closed
    }

    /// Where each stream of a session taken over from an earlier run goes on: after the last
    /// sample of its last chunk, gaps inside that chunk counted (a gap before a chunk's first
    /// sample lies below its `firstIndex`).
    private func continueStreams(_ session: inout OpenSession) async throws {
        let chunks = try await store.chunks(sessionId: session.record.id)
        for stream in SensorStream.allCases {
            guard let last = chunks.filter({ $0.stream == stream.rawValue }).max(by: { $0.seq < $1.seq }) else { continue }
            let inside = last.gaps.filter { $0.fromIndex > last.firstIndex }.reduce(Int64(0)) { $0 + $1.missing }
            if var state = session.streams[stream], state.chunk.id == last.id {
                state.nextIndex = last.firstIndex + Int64(state.samples.count) + inside
                state.lastMs = state.samples.last?.timestampMs
                session.streams[stream] = state
            } else {
                var state = newStream(stream, last.firstIndex + Int64(last.count) + inside, session.record, last.odrHz, last.range,
                                      seq: last.seq + 1)
                state.lastMs = last.endMs
                session.streams[stream] = state
            }
        }
    }

    /// The index and time (epoch ms) of the last sample of `stream` in the device's open session:
    /// where a stream continues after a restart of the gateway.
    /// The time is on the timeline, as the sensors stamp.
    public func continuation(device: String, stream: SensorStream) -> (nextIndex: Int64, lastMs: Double)? {
        guard let state = open[device]?.streams[stream], let lastMs = state.lastMs else { return nil }
        return (state.nextIndex, lastMs - correctionMs)
    }

    /// Open sessions, for the status.
    public func openSessions() -> [SessionRecord] { open.values.map(\.record).sorted { $0.startMs < $1.startMs } }

    /// Queues the session row and its documents for the next commit.
    func enqueue(_ session: inout OpenSession) {
        pending.sessions.append(session.record)
        let documents = renderer.sessionDocuments(session.record)
        pending.documents += documents
        session.documentsDirty = false
        session.documentsStale = false
        session.documentsWrittenAt = .now
        session.documentsBytes = documents.first?.body.count ?? 0
        session.rowDirty = false
    }

    /// Whether an open session's lagging documents may be rewritten now (``CaptureRules/documentPace(bytes:)``).
    func documentsDue(_ session: OpenSession) -> Bool {
        guard session.documentsStale else { return false }
        return (documentsDeadline(session) ?? .now) <= .now
    }

    /// When a session's lagging documents become due, if they lag.
    func documentsDeadline(_ session: OpenSession) -> ContinuousClock.Instant? {
        guard session.documentsStale else { return nil }
        return session.documentsWrittenAt.map { $0 + rules.documentPace(bytes: session.documentsBytes) } ?? .now
    }

    func updateMedals(userId: String) async throws {
        _ = try await medalsBeforeRun(userId: userId)
        let sessions = try await store.sessions(userId: userId, chunkLists: false).filter { !$0.isOpen }
        let evaluated = Medals.evaluate(sessions.map { ($0.localDate, calendar.weekKey(epochMs: $0.startMs), $0.durationMs) }, calendar: calendar)
        let previous = try await storedMedals(userId: userId)
        let merged = previous.union(evaluated)
        let written = try await hasMedalDocument(userId)
        guard merged != previous || !written else { return }
        medalCache[userId] = merged
        pending.documents.append(DocumentWrite(path: try DocumentPaths.medals(userId: userId), body: renderer.medals(merged), retain: true, device: nil))
        try await commit()
    }

    func storedMedals(userId: String) async throws -> Medals {
        if let cached = medalCache[userId] { return cached }
        let path = try DocumentPaths.medals(userId: userId)
        guard let body = try await store.document(path) else { return Medals() }
        let document: JSONValue
        do { document = try JSONValue(parsing: body) } catch { throw CaptureError.unreadableDocument(path: path.description, reason: "not valid JSON: \(error)") }
        guard let object = document.object else { return Medals() }
        let medals = Medals(earned: Set(object.compactMap { $0.value.bool == true ? $0.key : nil }))
        medalCache[userId] = medals
        return medals
    }

    func hasMedalDocument(_ userId: String) async throws -> Bool {
        try await store.document(try DocumentPaths.medals(userId: userId)) != nil
    }
}
