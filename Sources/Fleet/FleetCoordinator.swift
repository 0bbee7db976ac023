import Logging

/// One gateway's part in a fleet: the reports of every gateway (its own and, through the
/// broker, the others'), and the answer to "may this gateway try to connect to that sensor now?"
/// by ``FleetRule``. It owns the fleet's state; the coordination channel feeds it documents and
/// publishes what it hands out, and the sensors ask it before connecting.
///
/// Without the channel (the broker cannot be reached) there is no agreement to be had: every
/// gateway then tries every sensor it is configured with, as a lone gateway does, and the board,
/// which takes one central at a time, settles it. Capture never waits for the broker.
public actor FleetCoordinator {
    public nonisolated let gateway: String
    let slots: Int
    let logger: Logger
    /// Hands this gateway's report to the channel (retained).
    let publish: @Sendable ([UInt8]) -> Void
    var mine: FleetReport
    var others: [String: FleetReport] = [:]
    var coordinated = false
    /// Counts changes of what the fleet knows: a waiter says which it has seen (no change lost
    /// between a question and the wait).
    public private(set) var version: UInt64 = 0
    private var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter: UInt64 = 0
    private let now: @Sendable () -> Double
    /// Until when nothing unheld is claimed, and why: at start, while the channel connects, and
    /// after each connection, while every gateway's first reports arrive (``start(settle:)``).
    private var settling: (until: ContinuousClock.Instant, reason: String)?
    private var settle: Duration = .zero
    /// The last session hand-off seen for each sensor (published by any gateway, this one
    /// included, and not yet taken), and how hand-offs reach the broker (FleetCoordinator+Handoff).
    var handoffs: [String: Handoff] = [:]
    var handoffTransport: HandoffTransport?

    public init(gateway: String, slots: Int, logger: Logger, now: @escaping @Sendable () -> Double,
                publish: @escaping @Sendable ([UInt8]) -> Void) {
        (self.gateway, self.slots, self.now, self.publish) = (gateway, slots, now, publish)
        self.logger = logger
        mine = FleetReport(gateway: gateway, freeSlots: slots)
    }

    /// Starts the first wait: up to `settle` for the channel and the others' reports before any
    /// sensor is claimed, so that a fleet starting together decides on what all of it hears
    /// rather than on who scanned first. The same wait follows every (re)connection.
    public func start(settle: Duration) {
        self.settle = settle
        hold(for: settle, "waiting for the fleet's coordination to connect")
    }

    /// The last will: this gateway's report, offline and holding nothing.
    public nonisolated var will: [UInt8] { FleetReport(gateway: gateway, online: false).encoded() }

    // MARK: - From the channel

    /// The channel connected (and subscribed) or went away. On connecting, this gateway's report
    /// is published again: the broker may have sent the will meanwhile.
    public func channel(up: Bool) {
        guard up != coordinated else { return }
        coordinated = up
        logger.notice(up ? "fleet coordination connected" : "fleet coordination lost; every sensor is tried until it is back",
                      metadata: ["subsystem": "fleet"])
        if up {
            send()
            hold(for: settle, "learning what the other gateways hear")
        } else {
            others.removeAll()
        }
        wake()
    }

    /// A retained report of `topicGateway` (its topic's last level); an empty payload is a
    /// report removed. This gateway's own document, echoed back, is ignored.
    public func received(topicGateway: String, payload: [UInt8]) {
        guard topicGateway != gateway else { return }
        if payload.isEmpty {
            others[topicGateway] = nil
        } else {
            do {
                let report = try FleetReport(parsing: payload, topicGateway: topicGateway)
                if others[topicGateway]?.online != report.online {
                    logger.info(report.online ? "gateway online" : "gateway offline", metadata: ["subsystem": "fleet", "gateway": "\(topicGateway)"])
                }
                others[topicGateway] = report
            } catch {
                logger.warning("\(error)", metadata: ["subsystem": "fleet"])
                others[topicGateway] = nil
            }
        }
        wake()
    }

    // MARK: - From the sensors

    /// What the last scan heard (address: RSSI); replaces the last.
    public func heard(_ sightings: [String: Int]) {
        guard sightings != mine.hears else { return }
        mine.hears = sightings
        send()
        wake()
    }

    /// A sensor connected to this gateway (`true`) or its link ended.
    public func holding(_ sensor: String, _ held: Bool) {
        let changed = held ? mine.holding.insert(sensor).inserted : mine.holding.remove(sensor) != nil
        guard changed else { return }
        mine.freeSlots = max(0, slots - mine.holding.count)
        send()
        wake()
    }

    /// Whether this gateway should try `sensor` now, the gateway whose link keeps it (another
    /// one's, or this one's), and why (or why not), as of ``version``.
    public func turn(for sensor: String) -> (mine: Bool, heldBy: String?, reason: String, version: UInt64) {
        if let settling, ContinuousClock.now < settling.until, !mine.holding.contains(sensor) {
            return (false, nil, settling.reason, version)
        }
        guard coordinated else { return (true, nil, "fleet coordination not connected: tried by every gateway", version) }
        let decision = decision(for: sensor)
        return (decision.owner == gateway, decision.heldBy, decision.reason, version)
    }

    /// Whether some of `sensors` is held by no online gateway (so advertises, and a scan may hear it).
    public func wantsSightings(of sensors: Set<String>) -> Bool {
        guard coordinated else { return false }
        let held = (Array(others.values) + [mine]).filter(\.online).reduce(into: Set<String>()) { $0.formUnion($1.holding) }
        return !sensors.isSubset(of: held)
    }

    public func decision(for sensor: String) -> FleetRule.Decision {
        FleetRule.decide(sensor: sensor, reports: Array(others.values) + [mine])
    }

    /// Returns once the fleet's state has changed since `seen` (a ``version``), or when the task
    /// is cancelled.
    public func untilChanged(since seen: UInt64) async {
        guard version == seen else { return }
        nextWaiter += 1
        let id = nextWaiter
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if Task.isCancelled || version != seen { continuation.resume() } else { waiters[id] = continuation }
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    // MARK: - Status

    public func status(sensors: [String]) -> FleetStatus {
        FleetStatus(gateway: gateway, coordinated: coordinated,
                    gateways: (Array(others.values) + [mine]).sorted { $0.gateway < $1.gateway },
                    sensors: Dictionary(uniqueKeysWithValues: sensors.map { ($0, decision(for: $0)) }))
    }

    // MARK: -

    func send() {
        mine.atMs = now()
        publish(mine.encoded())
    }

    private func hold(for duration: Duration, _ reason: String) {
        guard duration > .zero else { return }
        let until = ContinuousClock.now + duration
        settling = (until, reason)
        Task {
            try? await Task.sleep(until: until)
            self.settled(until)
        }
    }

    private func settled(_ until: ContinuousClock.Instant) {
        guard settling?.until == until else { return }
        settling = nil
        wake()
    }

    func wake() {
        version &+= 1
        let waiting = waiters
        waiters.removeAll()
        for continuation in waiting.values { continuation.resume() }
    }

    private func cancelWaiter(_ id: UInt64) {
        waiters.removeValue(forKey: id)?.resume()
    }
}

/// The fleet as one gateway sees it, for the admin status and the live view.
public struct FleetStatus: Sendable, Equatable {
    public var gateway: String
    public var coordinated: Bool
    public var gateways: [FleetReport]
    /// Per configured sensor: who should hold it, and why.
    public var sensors: [String: FleetRule.Decision]
}
