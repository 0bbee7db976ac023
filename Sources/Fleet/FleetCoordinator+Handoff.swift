import JSON

/// A session hand-off as the coordinator keeps it: the document, and the session it names.
struct Handoff: Sendable, Equatable {
    var session: String
    var payload: [UInt8]
}

/// How hand-offs reach the broker: on the publisher's connection, after everything its outbox
/// holds, so that the session's last documents from this gateway are there before the next
/// gateway can write the session (docs/fleet.md, "Sessions across gateways").
public struct HandoffTransport: Sendable {
    /// Returns once everything the outbox held when called is delivered (connected).
    public var outboxDelivered: @Sendable () async -> Void
    /// Publishes `payload` retained for `sensor` (an empty payload clears it); false when it could not.
    public var publish: @Sendable (_ sensor: String, _ payload: [UInt8]) async -> Bool

    public init(outboxDelivered: @escaping @Sendable () async -> Void, publish: @escaping @Sendable (String, [UInt8]) async -> Bool) {
        self.outboxDelivered = outboxDelivered
        self.publish = publish
    }
}

/// Sessions handed from one gateway to the next. The releasing gateway reports the sensor as
/// `handing` (with the session) in the same report that stops saying it holds it, so a gateway
/// that connects to the board next knows to wait for the hand-off; the document itself, retained
/// at `gyrogate/fleet/handoff/<sensor>`, follows the session's last documents; the gateway that
/// takes it clears it, and the releasing gateway then stops reporting `handing`.
extension FleetCoordinator {
    /// How long a gateway that connected waits for a hand-off that another reports on its way.
    static let handoffWait: Duration = .seconds(5)

    public func useHandoffTransport(_ transport: HandoffTransport) { handoffTransport = transport }

    /// Whether sessions are handed on: only while the coordination is connected (without it no
    /// gateway would learn of the hand-off, and the session stays open here instead).
    public func handsOffSessions() -> Bool { coordinated && handoffTransport != nil }

    /// The sensor's link ended with `session` open, released as `payload`: no longer held, now
    /// handing, and the document published (unless this gateway takes it back first).
    public func release(_ sensor: String, session: String, payload: [UInt8]) {
        handoffs[sensor] = Handoff(session: session, payload: payload)
        mine.holding.remove(sensor)
        mine.handing[sensor] = session
        mine.freeSlots = max(0, slots - mine.holding.count)
        send()
        wake()
        guard let transport = handoffTransport else { return }
        Task {
            await transport.outboxDelivered()
            // Taken back here meanwhile (the board stayed in range): nothing to publish.
            guard self.stillHanding(sensor, session) else { return }
            if await !transport.publish(sensor, payload) {
                logger.warning("the session hand-off could not be published; a gateway that connects meanwhile begins a new session",
                               metadata: ["subsystem": "fleet", "sensor": "\(sensor)", "session": "\(session)"])
            }
        }
    }

    /// After connecting to `sensor`: the hand-off to take, if any; while an online gateway
    /// reports one on its way and it has not arrived, waits up to `handoffWait` (5 s).
    public func handoffPayload(for sensor: String) async -> [UInt8]? {
        let deadline = ContinuousClock.now + Self.handoffWait
        var timer: Task<Void, Never>?
        defer { timer?.cancel() }
        while !Task.isCancelled {
            if let handoff = handoffs[sensor] { return handoff.payload }
            guard coordinated, handingElsewhere(sensor), ContinuousClock.now < deadline else { return nil }
            if timer == nil {
                timer = Task {
                    try? await Task.sleep(until: deadline)
                    self.wake()
                }
            }
            await untilChanged(since: version)
        }
        return nil
    }

    /// The hand-off of `session` for `sensor` was taken here: cleared locally and on the broker.
    public func tookHandoff(_ sensor: String, session: String) {
        if handoffs[sensor]?.session == session { handoffs[sensor] = nil }
        if mine.handing[sensor] == session {
            mine.handing[sensor] = nil
            send()
        }
        wake()
        guard let transport = handoffTransport else { return }
        Task { _ = await transport.publish(sensor, []) }
    }

    /// A retained hand-off for `sensor` from the broker; an empty payload: a gateway took it.
    public func receivedHandoff(sensor: String, payload: [UInt8]) {
        if payload.isEmpty {
            handoffs[sensor] = nil
            if mine.handing.removeValue(forKey: sensor) != nil { send() }
        } else if let session = (try? JSONValue.object(parsing: payload))?["session"]?.string, !session.isEmpty {
            handoffs[sensor] = Handoff(session: session, payload: payload)
        } else {
            logger.warning("a session hand-off that names no session is ignored", metadata: ["subsystem": "fleet", "sensor": "\(sensor)"])
        }
        wake()
    }

    /// A hand-off the sensors' side could not read (the reason names what was wrong): logged, not taken.
    public func unusableHandoff(_ reason: String) {
        logger.warning("\(reason)", metadata: ["subsystem": "fleet"])
    }

    func stillHanding(_ sensor: String, _ session: String) -> Bool {
        mine.handing[sensor] == session && handoffs[sensor]?.session == session
    }

    /// Whether another online gateway reports a hand-off of `sensor` on its way.
    func handingElsewhere(_ sensor: String) -> Bool {
        others.values.contains { $0.online && $0.handing[sensor] != nil }
    }
}
