/// Whether this gateway should connect to a sensor now: the sensors' view of a fleet of
/// gateways sharing the boards. The daemon implements it with the fleet's coordinator; without a
/// fleet there is none and every configured sensor is tried.
///
/// A supervisor asks ``turn(for:)`` before each connection attempt and waits with
/// ``untilChanged(since:)`` while another gateway should have the sensor; it reports each link with
/// ``holding(_:_:)``, and its fleet reports what its scans hear with ``heard(_:)``.
public protocol ConnectionClaims: Sendable {
    /// Whether this gateway should try `address` now, and why (or why not), for the status; and
    /// the version of what the fleet knows that the answer came from.
    func turn(for address: String) async -> (mine: Bool, reason: String, version: UInt64)
    /// Returns once what the fleet knows has changed since `version`, or when the task is cancelled.
    func untilChanged(since version: UInt64) async
    /// `address` connected to this gateway (`true`), or its link ended.
    func holding(_ address: String, _ held: Bool) async
    /// The sensors the last scan heard advertising, with their RSSI (dBm).
    func heard(_ sightings: [String: Int]) async
    /// Whether a scan could tell the fleet anything: some of `sensors` is held by no gateway (a
    /// held board does not advertise). In the steady state nothing is, and nothing is scanned.
    func wantsSightings(of sensors: Set<String>) async -> Bool
}

extension SensorSupervisor {
    enum Turn { case cancelled, atOnce, afterWaiting }

    /// Waits until the fleet says this gateway should try the sensor (at once without a fleet),
    /// showing who has it meanwhile (state `heldElsewhere`, ``SensorStatus/fleet``).
    func awaitTurn() async -> Turn {
        guard let claims = settings.claims else { return .atOnce }
        var waited = false
        while !Task.isCancelled {
            let (mine, reason, version) = await claims.turn(for: address)
            current.fleet = reason
            if mine { return waited ? .afterWaiting : .atOnce }
            if current.state != .heldElsewhere { transition(to: .heldElsewhere, ["reason": "\(reason)"]) }
            if linkedSinceHandOver, reason.hasPrefix("held by ") { await handOver(reason) }
            waited = true
            await claims.untilChanged(since: version)
        }
        return .cancelled
    }

    /// The board streams to another gateway now: the session open here ends with this gateway's
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
                    let (mine, reason, version) = await claims.turn(for: address)
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
