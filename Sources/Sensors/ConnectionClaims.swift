import Capture
import CaptureValues

/// Whether this gateway should connect to a sensor now: the sensors' view of a fleet of
/// gateways sharing the boards. The daemon implements it with the fleet's coordinator; without a
/// fleet there is none and every configured sensor is tried.
///
/// A supervisor asks ``turn(for:)`` before each connection attempt and waits with
/// ``untilChanged(since:)`` while another gateway should have the sensor; it reports each link with
/// ``holding(_:_:)``, and its fleet reports what its scans hear with ``heard(_:)``.
public protocol ConnectionClaims: Sendable {
    /// Whether this gateway should try `address` now; the gateway whose link to the board keeps
    /// it there, if one does; why (or why not), for the status; and the version of what the
    /// fleet knows that the answer came from.
    func turn(for address: String) async -> (mine: Bool, heldBy: String?, reason: String, version: UInt64)
    /// Returns once what the fleet knows has changed since `version`, or when the task is cancelled.
    func untilChanged(since version: UInt64) async
    /// `address` connected to this gateway (`true`), or its link ended.
    func holding(_ address: String, _ held: Bool) async
    /// The sensors the last scan heard advertising, with their RSSI (dBm).
    func heard(_ sightings: [String: Int]) async
    /// Whether a scan could tell the fleet anything: some of `sensors` is held by no gateway (a
    /// held board does not advertise). In the steady state nothing is, and nothing is scanned.
    func wantsSightings(of sensors: Set<String>) async -> Bool
    /// This gateway's name in the fleet: a hand-off says who released it.
    var gateway: String { get }
    /// Whether a session whose link ends is handed on (the fleet's coordination is connected);
    /// otherwise it stays open here, as on a lone gateway, until the board comes back.
    func handsOffSessions() async -> Bool
    /// The link to `address` ended and its session was released: the fleet passes `handoff` to
    /// whichever gateway connects to the board next, and no longer reports the sensor held.
    func release(_ address: String, _ handoff: SessionHandoff) async
    /// Right after connecting to `address`: the session to continue, if one was released for
    /// it, waiting a few seconds for one that a gateway of the fleet says is on its way.
    func handoff(for address: String) async -> SessionHandoff?
    /// The hand-off for `address` was taken here (continued, or closed): the fleet clears it.
    func tookHandoff(_ address: String, session: String) async
}

extension SensorSupervisor {
    enum Turn { case cancelled, atOnce, afterWaiting }

    /// Waits until the fleet says this gateway should try the sensor (at once without a fleet),
    /// showing who has it meanwhile (state `heldElsewhere`, ``SensorStatus/fleet``).
    func awaitTurn() async -> Turn {
        guard let claims = settings.claims else { return .atOnce }
        var waited = false
        while !Task.isCancelled {
            let (mine, heldBy, reason, version) = await claims.turn(for: address)
            current.fleet = reason
            if mine { return waited ? .afterWaiting : .atOnce }
            if current.state != .heldElsewhere { transition(to: .heldElsewhere, ["reason": "\(reason)"]) }
            // Another gateway's link has the board now: the session still open here ends.
            if linkedSinceHandOver, heldBy != nil { await handOver(reason) }
            waited = true
            await claims.untilChanged(since: version)
        }
        return .cancelled
    }

    /// The board streams to another gateway now, and a session of it is still open here (not
    /// released when its link ended: the coordination was away then): it ends with this gateway's
    /// last sample (every sample handed over first), so that a user has one open session, at the
    /// gateway that captures them. Once per hand-over.
    private func handOver(_ reason: String) async {
        linkedSinceHandOver = false
        await drainFeed()
        await engine.closeSession(device: identity.device, reason: "the fleet moved the sensor: \(reason)")
    }

    private enum Attempt: Sendable {
        case link(any MetaWearLink)
        case failed(any Error)
        case taken(String)
    }

    /// Connects, and in a fleet gives up as soon as another gateway reports the sensor held: it
    /// connected first, and the board, which takes one central and stops advertising, would leave
    /// this attempt waiting out its whole timeout, with every other attempt of this controller
    /// queued behind it (the host runs one at a time).
    func connectUnlessTaken(_ connector: any MetaWearConnector) async throws -> any MetaWearLink {
        let (address, timeout) = (self.address, settings.connectTimeout)
        guard let claims = settings.claims else { return try await connector.connect(address: address, timeout: timeout) }
        let outcome = await withTaskGroup(of: Attempt.self) { group -> Attempt in
            group.addTask {
                do { return .link(try await connector.connect(address: address, timeout: timeout)) } catch { return .failed(error) }
            }
            group.addTask {
                while !Task.isCancelled {
                    let (mine, _, reason, version) = await claims.turn(for: address)
                    if !mine { return .taken(reason) }
                    await claims.untilChanged(since: version)
                }
                return .failed(CancellationError())
            }
            let first = await group.next() ?? .failed(CancellationError())
            group.cancelAll()
            // The other child ends too; a link that its connect made after all is let go.
            for await other in group {
                if case .link(let late) = other { await late.disconnect() }
            }
            return first
        }
        switch outcome {
        case .link(let link): return link
        case .failed(let error): throw error
        case .taken(let reason): throw FleetTaken(reason: reason)
        }
    }

    /// The link ended: in a coordinated fleet the session open here is released to whichever
    /// gateway connects to the board next, this one included, with every sample handed to the
    /// engine first. A gateway that is stopping keeps it (its restart continues or closes it).
    func releaseSession() async {
        guard let claims = settings.claims, !Task.isCancelled, await claims.handsOffSessions() else { return }
        await drainFeed()
        do {
            let cycle = boardClock.map { SessionHandoff.BoardCycle(resetUID: $0.resetUID, resetTime: $0.resetTime) }
            guard let handoff = try await engine.handOffSession(device: identity.device, gateway: claims.gateway, boardCycle: cycle,
                                                                carryingGapChunks: settings.board.backfill != nil) else { return }
            linkedSinceHandOver = false
            // The session is no longer this gateway's: nothing of its streams may carry over into
            // the next link's (a continuation taken from a hand-off whose initialisation then
            // failed would otherwise place a new session's samples after the released one's).
            trackers = StreamTrackers()
            continuation = nil
            accelerometerContinuation = nil
            continuationReason = .gatewayRestarted
            staleBeforePlan = []
            // Nor what the board sent on the link that ended before its initialisation was done
            // (the released stream's samples): the next gateway counts them as missing.
            unparsed = []
            await claims.release(address, handoff)
        } catch {
            logger.error("the session could not be released to the fleet; it stays open here", metadata: ["error": "\(error)"])
        }
    }

    /// Connected: continues the session the fleet handed over for the board, if any. Its streams
    /// go on at the hand-off's indices (``continuation``), the samples in between a
    /// `handedOver` gap; trackers of an earlier link here do not count them.
    func takeHandoff() async {
        guard let claims = settings.claims, let handoff = await claims.handoff(for: address) else { return }
        do {
            let continues = try await engine.continueSession(handoff)
            await claims.tookHandoff(address, session: handoff.session.id)
            guard continues else { return }
        } catch {
            logger.error("the session handed over could not be continued here", metadata: [
                "session": "\(handoff.session.id)", "error": "\(error)"])
            return
        }
        trackers = StreamTrackers()
        // No plan until the board's initialisation sets this link's: the board's stream from
        // before (its stale samples) is then kept for the continuation, which counts the samples
        // between exactly from them, instead of reaching the earlier link's shapes and no tracker.
        plan = nil
        staleBeforePlan = []
        // Bytes an earlier link of this gateway left unparsed came before the hand-off's position.
        unparsed = []
        continuation = await engine.continuation(device: identity.device, stream: .gyro)
        accelerometerContinuation = await engine.continuation(device: identity.device, stream: .accelerometer)
        continuationReason = .handedOver
        current.lastSampleMs = continuation?.lastMs ?? current.lastSampleMs
        // The board's clock is read next (initialisation): it places the same power cycle where
        // the releasing gateway did, so the stale stamps count the samples in between in the
        // frame the session's last ones were dated in (``MetaWearBoard`` keeps a known reset
        // time within half a second of its reading).
        if let cycle = await engine.timelineBoardCycle(of: handoff) {
            resetTimes[cycle.resetUID] = cycle.resetTime
            if settings.board.backfill != nil {
                try? await engine.saveBoardResetTime(device: address, resetUID: cycle.resetUID, resetTime: cycle.resetTime)
            }
        }
        linkedSinceHandOver = true
        logger.notice("continuing a session handed over", metadata: ["session": "\(handoff.session.id)", "from": "\(handoff.from)"])
    }

    /// Tells the fleet, if any, that the sensor's link began or ended.
    func claimLink(_ held: Bool) async {
        if held { linkedSinceHandOver = true }
        await settings.claims?.holding(address, held)
    }
}

/// A connection attempt given up because another gateway of the fleet holds the sensor.
public struct FleetTaken: Error, CustomStringConvertible {
    public var reason: String
    public var description: String { "connection attempt given up: \(reason)" }
}

extension SensorFleet {
    /// With a fleet: scans every `every` for `duration` and reports which of this gateway's sensors
    /// it heard, and how loud, until cancelled. A scan that fails (a controller going away)
    /// reports nothing heard: a gateway that cannot hear is no candidate.
    func reportSightings(_ claims: any ConnectionClaims, connector: any MetaWearConnector, every: Duration, for duration: Duration,
                         sensors: Set<String>) async {
        while !Task.isCancelled {
            guard await claims.wantsSightings(of: sensors) else {
                // Every board is connected somewhere, so none advertises: hearing none is the truth.
                await claims.heard([:])
                try? await Task.sleep(for: every)
                continue
            }
            let heard = (try? await connector.sightings(timeout: duration)) ?? [:]
            if Task.isCancelled { return }
            await claims.heard(heard.filter { sensors.contains($0.key) })
            try? await Task.sleep(for: every - duration)
        }
    }
}
