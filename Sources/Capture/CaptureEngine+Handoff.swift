import CaptureValues
import GyroStore

/// Sessions that move between gateways of a fleet (``SessionHandoff``). One gateway at a time
/// writes a session: the one that holds the board's single connection, from the moment it
/// adopts the session until it releases it.
extension CaptureEngine {
    /// Stops writing the device's open session because its link ended and another gateway (or
    /// this one, later) may connect to the board next: its open chunks become documents, its
    /// documents are written as subscribers will go on seeing them (open), and its row is
    /// marked as no longer this gateway's (not open here, no end), so that neither a restart's
    /// recovery nor anything else here writes it again. Returns the hand-off for the next
    /// gateway, nil when the device has no open session. Medals are not evaluated: the session
    /// has not ended. `boardCycle` is the board's power cycle as this gateway placed it (its
    /// `reset_uid` and reset time on the timeline, s), which the hand-off carries in true time.
    /// With `carryingGapChunks` (a gateway that backfills), the hand-off carries the session's
    /// chunks that list a gap a backfill could still fill, so that the next gateway can fill it.
    public func releaseSession(device: String, gateway: String, boardCycle: SessionHandoff.BoardCycle? = nil,
                               carryingGapChunks: Bool = false) async throws -> SessionHandoff? {
        if redatingInProgress { await waitWhileRedating() }
        guard var session = open.removeValue(forKey: device) else { return nil }
        var streams: [SensorStream: SessionHandoff.Stream] = [:]
        for stream in SensorStream.allCases {
            guard var state = session.streams[stream] else { continue }
            let hasSamples = !state.samples.isEmpty
            closeChunk(&state, session: &session)
            guard let lastMs = state.lastMs else { continue }  // a stream that never had a sample
            streams[stream] = SessionHandoff.Stream(nextIndex: state.nextIndex, lastMs: lastMs,
                                                    lastSeq: max(0, state.chunk.seq - (hasSamples ? 0 : 1)),
                                                    odrHz: state.chunk.odrHz, range: state.chunk.range)
        }
        enqueue(&session)
        // The row only: the documents above stay those of an open session.
        pending.sessions[pending.sessions.count - 1].isOpen = false
        runSessions[session.record.id] = nil
        logger.info("session released to the fleet", metadata: ["subsystem": "capture", "session": "\(session.record.id)",
                                                                "device": "\(device)", "samples": "\(session.record.samples)"])
        try await commit()
        let cycle = boardCycle?.shifted(bySeconds: correctionMs / 1000)
        let carried = carryingGapChunks ? try await store.carriedChunks(sessionId: session.record.id) : []
        return SessionHandoff(session: session.record, streams: streams, from: gateway, atMs: now(), boardCycle: cycle, carried: carried)
    }

    /// The hand-off's board power cycle with its reset time on this gateway's timeline (s): where
    /// the next reading of the board's clock places that cycle here.
    public func timelineBoardCycle(of handoff: SessionHandoff) -> SessionHandoff.BoardCycle? {
        handoff.boardCycle?.shifted(bySeconds: -correctionMs / 1000)
    }

    /// Continues a session another gateway (or this one, earlier) released: from now on this
    /// gateway writes its documents. Its streams go on at the hand-off's indices, so the first
    /// samples after it record the samples in between as a gap (`GapReason.handedOver` from
    /// the sensors). A different session open here for the device ends first.
    public func adoptSession(_ handoff: SessionHandoff) async throws {
        if redatingInProgress { await waitWhileRedating() }
        let device = handoff.session.device
        if let existing = open[device] {
            if existing.record.id == handoff.session.id { return }
            try await stopSession(device: device, reason: "the session handed over by \(handoff.from) continues instead")
        }
        var record = handoff.session
        record.isOpen = true
        record.endMs = nil
        var session = OpenSession(record: record, arrivalMs: now())
        for (stream, resume) in handoff.streams {
            var state = newStream(stream, resume.nextIndex, record, resume.odrHz, resume.range, seq: resume.lastSeq + 1)
            state.lastMs = resume.lastMs
            session.streams[stream] = state
        }
        open[device] = session
        pending.inherited.append(InheritedChunks(sessionId: record.id, gyro: record.chunkIds, accelerometer: record.accelChunkIds,
                                                   carried: handoff.carried))
        runSessions[record.id] = RunSession(startedHere: false, chunksBefore: Set(record.chunkIds + record.accelChunkIds),
                                            continuedFrom: Dictionary(handoff.streams.map { ($0.key.rawValue, $0.value.nextIndex) },
                                                                      uniquingKeysWith: min))
        counters.sessionsAdopted += 1
        logger.info("session adopted from the fleet", metadata: ["subsystem": "capture", "session": "\(record.id)",
                                                                 "device": "\(device)", "from": "\(handoff.from)",
                                                                 "chunksCarried": "\(handoff.carried.count)"])
        try await commit()
    }

    /// Ends a released session that no gateway continued (its board came back too late, or
    /// another session had already begun for it): at its last sample, with the documents of a
    /// closed session, written by this gateway, which now holds the hand-off.
    public func closeHandedOver(_ handoff: SessionHandoff) async throws {
        if redatingInProgress { await waitWhileRedating() }
        if open[handoff.session.device]?.record.id == handoff.session.id { return }
        var record = handoff.session
        record.isOpen = false
        record.endMs = record.lastSampleMs ?? record.startMs
        pending.sessions.append(record)
        pending.documents += renderer.sessionDocuments(record)
        pending.inherited.append(InheritedChunks(sessionId: record.id, gyro: record.chunkIds, accelerometer: record.accelChunkIds,
                                                   carried: handoff.carried))
        counters.sessionsClosed += 1
        logger.info("session handed over and not continued: closed at its last sample",
                    metadata: ["subsystem": "capture", "session": "\(record.id)", "from": "\(handoff.from)"])
        try await commit()
        try await updateMedals(userId: record.userId)
    }

    /// Whether a hand-off is too old to continue: the board was away longer than a session may
    /// stay idle, so its next samples begin a new session (``CaptureRules/idleTimeoutMs``).
    public func handoffExpired(_ handoff: SessionHandoff) -> Bool {
        let last = handoff.session.lastSampleMs ?? handoff.atMs
        return now() - last > rules.idleTimeoutMs
    }
}
