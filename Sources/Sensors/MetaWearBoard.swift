import BLEHost
import Logging
import MetaWear
import PosixThreads

/// One MetaWear over one link: initialisation, streaming and the notifications in between.
///
/// ``initialise()`` always runs the full sequence, whatever state the board is in: enable
/// notifications on `9006`, read Device Information (firmware, model, hardware, manufacturer,
/// serial), module discovery (`[id, 80]`, one at a time, each answer awaited within
/// ``BoardOptions/responseTimeout``), then the reset sequence that clears streams, loggers,
/// processors and events left by an earlier session or another client, and a barrier read.
/// ``startStreaming()`` configures and starts the streams of ``StreamingPlan``; ``stopStreaming()``
/// stops them in reverse. The board runs on its link's `ThreadExecutor`: each batch of
/// notifications (a transport wake-up's) is handled synchronously as the host hands it over, and
/// data notifications are passed on as ``BoardEvent/samples(_:_:arrival:)`` to the `onEvents`
/// handler, in order, those of a batch together at its end. A stream the board kept running across a reconnect (it does: the link drop does not
/// stop it) is told apart from the new one:
/// - before discovery, data notifications cannot be parsed (register numbers depend on the chip), so
///   they are kept with their arrival times;
/// - after discovery, the gyro configuration is read (`13 83`). If it is the configuration this
///   gateway plans, the running gyro stream is taken to be the gateway's own from before the
///   reconnect: the kept and further notifications are passed on as its samples (the stream tracker
///   sees the time they were missing as a gap) until the barrier that follows the reset; otherwise
///   they are dropped. When none has arrived yet, one is awaited for a few notification periods
///   before the reset (see `awaitStaleSample(_:)`). Stale accelerometer data is always dropped.
/// - ``BoardEvent/restarted(_:_:)`` then marks where the new streams begin.
public actor MetaWearBoard {
    public let link: any MetaWearLink
    public let options: BoardOptions
    /// How long each answer is awaited; starts at ``BoardOptions/responseTimeout``.
    public internal(set) var responseTimeout: Duration
    let logger: Logger
    let now: @Sendable () -> Double

    public internal(set) var info = BoardInfo()
    public internal(set) var plan: StreamingPlan?
    /// Host time (s) at which the reset sequence stopped the board's streams.
    public internal(set) var stopTime: Double?
    public internal(set) var streaming = false
    /// Host time (s) of the last data notification accepted.
    public internal(set) var lastDataArrival: Double?
    public internal(set) var battery: Settings.BatteryState?

    /// Receives the events, on the link's loop, synchronously: those of a notification batch
    /// together at its end, any other at once.
    let onEvents: @Sendable ([BoardEvent]) -> Void
    /// The events of the batch being handled (storage kept from batch to batch), and whether
    /// one is.
    var batchEvents: [BoardEvent] = []
    var inBatch = false
    var parser = MetaWearPacketParser()
    enum Phase { case discovering, stale, quiet, streaming }
    var phase = Phase.quiet
    /// Data notifications that arrived before discovery finished.
    var early: [([UInt8], Double)] = []
    /// Whether stale gyro data (from before the reset) continues the gateway's stream.
    var staleGyroMatches = false
    /// Whether such stale data arrived during this initialisation.
    var staleGyroDelivered = false
    /// Resumed by the first stale gyro sample (or the link's end), see ``awaitStaleSample(_:)``.
    var staleWaiter: CheckedContinuation<Void, Never>?
    var subscribed = false
    var waiters: [UInt16: Waiter] = [:]
    /// Log clock readings per initialisation (``readClock()``).
    static let clockReadings = 4
    /// When the last answer to a request arrived (host seconds): a time read off the board is
    /// that close to the read, however late the request's caller resumes.
    var answerArrival: Double?
    /// The gyro loggers' ids (x/y slice, z slice), once created.
    public internal(set) var loggers: (UInt8, UInt8)?
    /// The time accounter the gyro streams through (``StreamingPlan/Stream/boardTime``), and the
    /// packer before it (``StreamingPlan/Stream/processorPacked``), once created.
    public internal(set) var gyroAccounter: UInt8?
    var gyroPacker: UInt8?
    /// The log clock read at this initialisation: converts accounter ticks to host time.
    var clock: BoardClock?
    /// The reset times of power cycles already placed (by an earlier link or run), by `reset_uid`.
    let knownResetTimes: [UInt8: Double]
    var ticks = TickUnwrapper()
    /// The loop's read whose arrival time ``arrival(_:)`` holds, and that time.
    var arrivalRead: UInt64 = 0
    var readArrival = 0.0
    var nextWaiterID = 0
    var closed = false
    /// What the board's caller is waiting for now (a request's name, a write): what a supervisor
    /// names when an initialisation does not finish (``SupervisorSettings/initialisationDeadline``).
    public internal(set) var step = "nothing yet"
    /// The log download in progress, fed by `0b 07`, `0b 08` and `0b 0d` notifications.
    /// Last: its size is known only at run time (a checked continuation), and so are the offsets
    /// of the properties declared after it, which then cost a metadata lookup on every access.
    var download: LogDownloadState?

    struct Waiter {
        var id: Int
        var continuation: CheckedContinuation<[UInt8], any Error>
    }

    /// `knownResetTimes`: when the power cycles this board may still be in began, as earlier
    /// readings placed them (see `readClock()`).
    public init(link: any MetaWearLink, options: BoardOptions, logger: Logger, knownResetTimes: [UInt8: Double] = [:],
                now: @escaping @Sendable () -> Double, onEvents: @escaping @Sendable ([BoardEvent]) -> Void = { _ in }) {
        self.link = link
        self.knownResetTimes = knownResetTimes
        self.options = options
        responseTimeout = options.responseTimeout
        self.logger = logger
        self.now = now
        self.onEvents = onEvents
        loop = link.loop
    }

    /// The link's loop, kept here: the executor is looked up on every notification.
    nonisolated let loop: ThreadExecutor

    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    // MARK: - Initialisation

    /// Runs the full initialisation and returns what was learnt. Throws ``BoardError`` on a
    /// missing answer or an unusable board; the caller reconnects.
    @discardableResult
    public func initialise() async throws -> BoardInfo {
        // Data kept from a failed attempt on this link stays: it is parsed once discovery succeeds.
        phase = .discovering
        (gyroAccounter, gyroPacker) = (nil, nil)
        ticks = TickUnwrapper()
        staleGyroMatches = false
        staleGyroDelivered = false
        streaming = false
        if !subscribed {
            subscribed = true
            step = "enabling notifications"
            let now = self.now
            // The link holds these callbacks, and with them the board, until it goes down (its
            // owner ends it after closing the board). Not weak: a weakly referenced object gets a
            // side table, which makes every retain and release of it slower, and the board is
            // retained and released on every batch.
            try await link.enableNotifications(receive: { batch in
                self.assumeIsolated { $0.handle(batch, now: now) }
            }, ended: {
                self.assumeIsolated { $0.linkEnded() }
            })
        }
        var fresh = BoardInfo()
        step = "reading device information"
        fresh.firmwareRevision = try await link.readString(MetaWearUUIDs.firmwareRevision)
        fresh.modelNumber = try await link.readString(MetaWearUUIDs.modelNumber)
        fresh.hardwareRevision = try await link.readString(MetaWearUUIDs.hardwareRevision)
        fresh.manufacturer = try await link.readString(MetaWearUUIDs.manufacturerName)
        fresh.serialNumber = try await link.readString(MetaWearUUIDs.serialNumber)
        var discovery = ModuleDiscovery(boardInfo: fresh)
        while let query = discovery.nextRequest {
            let answer = try await request(query, answer: query.module.rawValue, MetaWearRegister.readBit,
                                           what: "module discovery \(query)")
            try discovery.handle(answer)
        }
        info = discovery.boardInfo
        parser = MetaWearPacketParser(boardInfo: info)
        let plan: StreamingPlan
        do { plan = try StreamingPlan(board: info, options: options) } catch { throw BoardError.plan(error) }
        self.plan = plan
        let running = try await request(Gyro.readConfiguration(), answer: MetaWearModuleID.gyro.rawValue, 0x83,
                                        what: "gyro configuration read")
        staleGyroMatches = running == [0x13, 0x83] + plan.gyro.configure.payload
        // Before any stale sample is passed on: a board that reset since starts a new run.
        clock = try await readClock()
        if let clock { onEvent(.clock(clock)) }
        phase = .stale
        let kept = early
        early = []
        for (bytes, arrival) in kept { handle(bytes[...], arrival: arrival) }
        step = "a sample of the stream from before this link"
        await awaitStaleSample(plan)
        step = "writing the stream's reset"
        for command in plan.reset { try await link.write(command) }
        let stopTime = now()
        self.stopTime = stopTime
        // Barrier: every notification produced before the reset arrives before this answer.
        _ = try await request(Gyro.readConfiguration(), answer: MetaWearModuleID.gyro.rawValue, 0x83,
                              what: "gyro configuration read")
        phase = .quiet
        onEvent(.restarted(plan, StreamRestart(stopTime: stopTime, staleDelivered: staleGyroDelivered)))
        logger.info("board initialised", metadata: [
            "subsystem": "sensor", "model": "\(info.model.rawValue)", "firmware": "\(info.firmwareRevision ?? "?")",
            "gyro": "\(info.gyroChip?.rawValue ?? "none")", "packed": "\(plan.gyro.packed)",
            // What the board's stream from before this link did: where a session goes on, whether
            // its samples up to the stop are known exactly (delivered) or counted from the stop.
            "oldStream": "\(staleGyroMatches ? (staleGyroDelivered ? "delivered" : "silent") : "none")",
        ])
        return info
    }

    /// Reads the log clock (`0b 84`), on boards with a logging module: its `reset_uid` tells whether
    /// the board reset since the last reading, its tick when.
    ///
    /// The board reads its tick between the request and the answer, and the tick counts whole
    /// ticks, so each reading bounds the host time of tick 0: after `asked − (tick + 1) ticks`,
    /// before `answered − tick ticks`. A few readings in a row, at other phases of the tick,
    /// narrow that to about the shortest round trip, and a reading delayed on the way (a busy
    /// host, a later connection event) moves nothing. A power cycle already placed keeps its reset
    /// time, so that its streamed stamps, the gaps counted from them and its logged samples share
    /// one frame, across the tick's wraps too; a reading more than half a second away is another
    /// power cycle that reuses the 3-bit `reset_uid`.
    private func readClock() async throws -> BoardClock? {
        guard info.isPresent(.logging) else { return nil }
        let tickSeconds = Logging.tickMilliseconds / 1000
        var earliest = -Double.infinity
        var latest = Double.infinity
        var shortest = Double.infinity
        var reading: (time: Logging.Time, answered: Double)?
        for _ in 0..<Self.clockReadings {
            let asked = now()
            let answer = try await request(Logging.readTime(), answer: MetaWearModuleID.logging.rawValue, 0x84,
                                           what: "log clock read")
            guard case .logTime(let time) = try? parser.parse(answer), let answered = answerArrival else { return nil }
            // Another cycle or a wrapped tick between two readings: the last one alone counts.
            if let previous = reading?.time, previous.resetUID != time.resetUID || previous.tick > time.tick {
                (earliest, latest) = (-Double.infinity, Double.infinity)
            }
            reading = (time, answered)
            earliest = max(earliest, asked - (Double(time.tick) + 1) * tickSeconds)
            latest = min(latest, answered - Double(time.tick) * tickSeconds)
            shortest = min(shortest, answered - asked)
        }
        guard let (time, answered) = reading else { return nil }
        // Bounds that do not meet (the host clock stepped): the last reading, half a tick in.
        let resetTime = earliest <= latest ? (earliest + latest) / 2 : answered - (Double(time.tick) + 0.5) * tickSeconds
        logger.debug("log clock read", metadata: ["resetUID": "\(time.resetUID)", "tick": "\(time.tick)",
                                                  "roundTripMs": "\(shortest * 1000)", "boundsMs": "\((latest - earliest) * 1000)",
                                                  "resetTime": "\(resetTime)",
                                                  "known": "\(knownResetTimes[time.resetUID].map { "\($0)" } ?? "-")"])
        let keeps = !Logging.hasPageBuffer(moduleRevision: info.modules[.logging]?.revision ?? 0)
        if let known = knownResetTimes[time.resetUID] {
            // After a wrap of the u32 tick (72.8 days) the same cycle's tick 0 lies whole laps later.
            let placed = known + ((resetTime - known) / Logging.tickLapSeconds).rounded() * Logging.tickLapSeconds
            if abs(placed - resetTime) <= 0.5 {
                return BoardClock(resetUID: time.resetUID, resetTime: placed, logKeepsEntriesAcrossReset: keeps, measuredResetTime: resetTime)
            }
        }
        return BoardClock(resetUID: time.resetUID, resetTime: resetTime, logKeepsEntriesAcrossReset: keeps)
    }

    /// Reads the battery (`11 8c`); the answer is also sent as an event.
    public func readBattery() async throws -> Settings.BatteryState? {
        guard info.isPresent(.settings) else { return nil }
        let answer = try await request(Settings.readBatteryState(), answer: MetaWearModuleID.settings.rawValue, 0x8C,
                                       what: "battery read")
        if case .battery(let state) = try parser.parse(answer) { return state }
        return nil
    }

    /// Data notifications received before a discovery that never completed on this link; a
    /// supervisor hands them to the next board of the same sensor (``keep(_:)``) so that samples
    /// the board sent are not lost to a failed initialisation.
    public func takeUnparsed() -> [([UInt8], Double)] {
        defer { early = [] }
        return early
    }

    /// Adds data notifications kept from an earlier link, older than anything on this one.
    public func keep(_ notifications: [([UInt8], Double)]) { early = notifications + early }

    /// Changes how long answers are awaited (a supervisor lengthens it for a slow board).
    public func setResponseTimeout(_ timeout: Duration) { responseTimeout = timeout }

    /// Stops reading notifications and fails pending requests.
    public func close() {
        linkEnded()
    }

}
