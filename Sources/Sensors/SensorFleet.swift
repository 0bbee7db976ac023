import BLEHost
import Capture
import Logging
import Synchronization
import PosixThreads

/// All the sensors of one controller: one ``SensorSupervisor`` per configured sensor, plus, when
/// discovery is on, one per MetaWear a scan finds, up to the limits. Scans and connection attempts
/// of all supervisors go through the one ``MetaWearConnector`` (the BLE host runs one at a time).
///
/// The supervisors outlive a run: when the controller goes away and a new one is opened, the
/// next ``run(connector:)`` resumes the same supervisors, so each sensor's streams continue with
/// the interruption recorded as a gap.
public actor SensorFleet {
    public struct Member: Sendable, Equatable {
        public var address: String
        public var userId: String
        /// The board logs its stream, and link gaps are filled from the log (`nil`: off).
        public var backfill: BoardOptions.Backfill?
        public init(address: String, userId: String, backfill: BoardOptions.Backfill? = nil) {
            self.address = address
            self.userId = userId
            self.backfill = backfill
        }
    }

    public struct Discovery: Sendable, Equatable {
        public var userId: String
        public var maxSensors: Int
        public var scanEvery: Duration
        public var scanFor: Duration
        public init(userId: String, maxSensors: Int, scanEvery: Duration = .seconds(15), scanFor: Duration = .seconds(2)) {
            self.userId = userId
            self.maxSensors = maxSensors
            self.scanEvery = scanEvery
            self.scanFor = scanFor
        }
    }

    let configured: [Member]
    let discovery: Discovery?
    /// Most sensors on the controller at once (`bluetooth.maxSensors`).
    let limit: Int
    let engine: any CaptureSink
    let settings: SupervisorSettings
    let logger: Logger
    private var supervisors: [String: SensorSupervisor] = [:]
    private var order: [String] = []
    /// The supervisors in `order`, for ``statusOnLoop()``, which runs outside the actor.
    private let listed = Mutex<[SensorSupervisor]>([])
    /// The loop every supervisor runs on.
    public nonisolated let loop: ThreadExecutor

    public init(configured: [Member], discovery: Discovery?, limit: Int, engine: any CaptureSink,
                settings: SupervisorSettings, logger: Logger, loop: ThreadExecutor = .dataPlane) {
        self.configured = configured
        self.discovery = discovery
        self.limit = limit
        self.engine = engine
        self.settings = settings
        self.logger = logger
        self.loop = loop
    }

    /// Status of every supervised sensor, configured ones first.
    public func status() async -> [SensorStatus] {
        var result: [SensorStatus] = []
        for address in order { if let supervisor = supervisors[address] { result.append(await supervisor.status()) } }
        return result
    }

    /// Status of every supervised sensor, configured ones first, for a caller on ``loop`` (one
    /// of its timers): read synchronously, with no task and no hop through the actors, so a
    /// periodic reader costs no wake-up of any other thread.
    public nonisolated func statusOnLoop() -> [SensorStatus] {
        listed.withLock { $0 }.map { supervisor in supervisor.assumeIsolated { $0.status() } }
    }

    /// Runs until cancelled; every supervisor then stops its board and disconnects.
    public func run(connector: any MetaWearConnector) async {
        let firstRun = supervisors.isEmpty
        if firstRun {
            for member in configured.prefix(limit) { add(member) }
        }
        await withTaskGroup(of: Void.self) { group in
            for address in order {
                guard let supervisor = supervisors[address] else { continue }
                group.addTask { await supervisor.run(connector: connector) }
            }
            if let claims = settings.claims {
                let sensors = Set(order)
                let scan = settings.sightingScan
                group.addTask { await self.reportSightings(claims, connector: connector, every: scan.every, for: scan.duration, sensors: sensors) }
            }
            if firstRun, configured.count > limit {
                logger.warning("more sensors configured than bluetooth.maxSensors; the rest are ignored",
                               metadata: ["subsystem": "sensor", "limit": "\(limit)", "configured": "\(configured.count)"])
            }
            if let discovery {
                let allowed = min(limit, configured.count + discovery.maxSensors)
                // Until the fleet is full: supervisors are never removed, so a full fleet has
                // nothing left to discover, and a sleeping loop would only wake dispatch's threads.
                while !Task.isCancelled, supervisors.count < allowed {
                    if let found = try? await connector.scan(timeout: discovery.scanFor) {
                        for address in found where supervisors[address] == nil && supervisors.count < allowed {
                            logger.info("sensor discovered", metadata: ["subsystem": "sensor", "sensor": "\(address)"])
                            let supervisor = add(Member(address: address, userId: discovery.userId))
                            group.addTask { await supervisor.run(connector: connector) }
                        }
                    }
                    try? await Task.sleep(for: discovery.scanEvery)
                }
            }
            await group.waitForAll()
        }
    }

    @discardableResult
    private func add(_ member: Member) -> SensorSupervisor {
        var settings = self.settings
        settings.board.backfill = member.backfill
        let supervisor = SensorSupervisor(address: member.address, identity: SensorIdentity(device: member.address, userId: member.userId),
                                          engine: engine, settings: settings, logger: logger, loop: loop)
        supervisors[member.address] = supervisor
        order.append(member.address)
        listed.withLock { $0.append(supervisor) }
        return supervisor
    }
}
