import BLEHost
import Logging
import MetaWear

/// What a board reports while it runs.
public enum BoardEvent: Sendable {
    /// One notification's samples, raw, with the host arrival time (seconds).
    case samples(MetaWearModuleID, RawTriples, arrival: Double)
    /// The streams restart after a (re)initialisation (what is known of the old ones in
    /// `restart`); samples after this event belong to the new streams of `plan`. Every stale
    /// sample of the old gyro stream was sent before this event. (Indirect: inline, the plan
    /// would make every event, samples included, as large as itself to pass along.)
    indirect case restarted(StreamingPlan, StreamRestart)
    /// The board's log clock, read at an initialisation before any stale sample is passed on: a
    /// new `reset_uid` means the board reset since the last one.
    case clock(BoardClock)
    case button(Switch.State)
    case battery(Settings.BatteryState)
}

public enum BoardError: Error, Equatable, CustomStringConvertible {
    /// No answer to a request within the response timeout.
    case timeout(String)
    /// The link ended while waiting.
    case linkClosed
    case plan(StreamingPlan.PlanError)

    public var description: String {
        switch self {
        case .timeout(let what): "no answer to \(what) in time"
        case .linkClosed: "the link closed"
        case .plan(let error): error.description
        }
    }
}

/// One MetaWear over one link: initialisation, streaming and the notifications in between.
///
/// ``initialise()`` always runs the full sequence, whatever state the board is in: enable
/// notifications on `9006`, read Device Information (firmware, model, hardware, manufacturer,
/// serial), module discovery (`[id, 80]`, one at a time, each answer awaited within
/// ``BoardOptions/responseTimeout``), then the reset sequence that clears streams, loggers,
/// processors and events left by an earlier session or another client, and a barrier read.
/// ``startStreaming()`` configures and starts the streams of ``StreamingPlan``; ``stopStreaming()``
/// stops them in reverse. The board runs on its link's ``DataPlaneLoop``: each notification is
/// handled synchronously as the host reads it, and data notifications are passed on at once as
/// ``BoardEvent/samples(_:_:arrival:)`` to the `onEvent` handler, in order. A stream the board kept running across a reconnect (it does: the link drop does not
/// stop it) is told apart from the new one:
/// - before discovery, data notifications cannot be parsed (register numbers depend on the chip), so
///   they are kept with their arrival times;
/// - after discovery, the gyro configuration is read (`13 83`). If it is the configuration this
///   gateway plans, the running gyro stream is taken to be the gateway's own from before the
///   reconnect: the kept and further notifications are passed on as its samples (the stream tracker
///   sees the time they were missing as a gap) until the barrier that follows the reset; otherwise
///   they are dropped. When none has arrived yet, one is awaited for a few notification periods
///   before the reset (see ``awaitStaleSample(_:)``). Stale accelerometer data is always dropped.
/// - ``BoardEvent/restarted(_:stopTime:)`` then marks where the new streams begin.
public actor MetaWearBoard {
    public let link: any MetaWearLink
    public let options: BoardOptions
    /// How long each answer is awaited; starts at ``BoardOptions/responseTimeout``.
    public private(set) var responseTimeout: Duration
    let logger: Logger
    let now: @Sendable () -> Double

    public private(set) var info = BoardInfo()
    public private(set) var plan: StreamingPlan?
    /// Host time (s) at which the reset sequence stopped the board's streams.
    public private(set) var stopTime: Double?
    public private(set) var streaming = false
    /// Host time (s) of the last data notification accepted.
    public private(set) var lastDataArrival: Double?
    public private(set) var battery: Settings.BatteryState?

    /// Receives every event, on the link's loop, synchronously.
    private let onEvent: @Sendable (BoardEvent) -> Void
    var parser = MetaWearPacketParser()
    private enum Phase { case discovering, stale, quiet, streaming }
    private var phase = Phase.quiet
    /// Data notifications that arrived before discovery finished.
    private var early: [([UInt8], Double)] = []
    /// Whether stale gyro data (from before the reset) continues the gateway's stream.
    private var staleGyroMatches = false
    /// Whether such stale data arrived during this initialisation.
    private var staleGyroDelivered = false
    /// Resumed by the first stale gyro sample (or the link's end), see ``awaitStaleSample(_:)``.
    private var staleWaiter: CheckedContinuation<Void, Never>?
    private var subscribed = false
    private var waiters: [UInt16: Waiter] = [:]
    /// When the last answer to a request arrived (host seconds): a time read off the board is
    /// that close to the read, however late the request's caller resumes.
    private var answerArrival: Double?
    /// The gyro loggers' ids (x/y slice, z slice), once created.
    public internal(set) var loggers: (UInt8, UInt8)?
    /// The time accounter the gyro streams through (``StreamingPlan/Stream/boardTime``), and the
    /// packer before it (``StreamingPlan/Stream/processorPacked``), once created.
    public private(set) var gyroAccounter: UInt8?
    private var gyroPacker: UInt8?
    /// The log clock read at this initialisation: converts accounter ticks to host time.
    private var clock: BoardClock?
    /// The reset times of power cycles already placed (by an earlier link or run), by `reset_uid`.
    private let knownResetTimes: [UInt8: Double]
    private var ticks = TickUnwrapper()
    /// The loop's read whose arrival time ``arrival(_:)`` holds, and that time.
    private var arrivalRead: UInt64 = 0
    private var readArrival = 0.0
    private var nextWaiterID = 0
    var closed = false
    /// The log download in progress, fed by `0b 07`, `0b 08` and `0b 0d` notifications.
    /// Last: its size is known only at run time (a checked continuation), and so are the offsets
    /// of the properties declared after it, which then cost a metadata lookup on every access.
    var download: LogDownloadState?

    private struct Waiter {
        var id: Int
        var continuation: CheckedContinuation<[UInt8], any Error>
    }

    /// `knownResetTimes`: when the power cycles this board may still be in began, as earlier
    /// readings placed them (see ``readClock()``).
    public init(link: any MetaWearLink, options: BoardOptions, logger: Logger, knownResetTimes: [UInt8: Double] = [:],
                now: @escaping @Sendable () -> Double, onEvent: @escaping @Sendable (BoardEvent) -> Void = { _ in }) {
        self.link = link
        self.knownResetTimes = knownResetTimes
        self.options = options
        responseTimeout = options.responseTimeout
        self.logger = logger
        self.now = now
        self.onEvent = onEvent
        loop = link.loop
    }

    /// The link's loop, kept here: the executor is looked up on every notification.
    nonisolated let loop: DataPlaneLoop

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
            let now = self.now
            let handle = loop.entry(into: MetaWearBoard.self) { board, bytes in board.handle(bytes, arrival: board.arrival(now)) }
            // The link holds these callbacks, and with them the board, until it goes down (its
            // owner ends it after closing the board). Not weak: a weakly referenced object gets a
            // side table, which makes every retain and release of it slower, and the board is
            // retained and released on every notification.
            try await link.enableNotifications(receive: { bytes in
                handle(self, bytes)
            }, ended: {
                self.assumeIsolated { $0.linkEnded() }
            })
        }
        var fresh = BoardInfo()
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
        await awaitStaleSample(plan)
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
        ])
        return info
    }

    /// Reads the log clock (`0b 84`), on boards with a logging module: its `reset_uid` tells whether
    /// the board reset since the last reading, its tick when.
    ///
    /// Each reading carries the answer's latency, which varies from one link to the next. A power
    /// cycle already placed keeps its reset time, so that its streamed stamps, the gaps counted
    /// from them and its logged samples share one frame; a reading more than half a second away
    /// is another power cycle that reuses the 3-bit `reset_uid`.
    private func readClock() async throws -> BoardClock? {
        guard info.isPresent(.logging) else { return nil }
        let asked = now()
        let answer = try await request(Logging.readTime(), answer: MetaWearModuleID.logging.rawValue, 0x84,
                                       what: "log clock read")
        guard case .logTime(let time) = try? parser.parse(answer), let read = answerArrival else { return nil }
        // The tick counts whole ticks: the board's time was half a tick later on average.
        let resetTime = read - (Double(time.tick) + 0.5) * Logging.tickMilliseconds / 1000
        logger.debug("log clock read", metadata: ["resetUID": "\(time.resetUID)", "tick": "\(time.tick)",
                                                  "roundTripMs": "\((read - asked) * 1000)", "resetTime": "\(resetTime)",
                                                  "known": "\(knownResetTimes[time.resetUID].map { "\($0)" } ?? "-")"])
        if let known = knownResetTimes[time.resetUID], abs(known - resetTime) <= 0.5 {
            return BoardClock(resetUID: time.resetUID, resetTime: known)
        }
        return BoardClock(resetUID: time.resetUID, resetTime: resetTime)
    }

    /// Configures and starts the planned streams, then button, connection interval and LED.
    public func startStreaming() async throws {
        guard let plan else { throw BoardError.timeout("start before initialise") }
        if let backfill = options.backfill, info.isPresent(.logging) { try await startLogging(plan, backfill) }
        phase = .streaming
        var commands = plan.startCommands
        if plan.gyro.boardTime {
            // The gyro's configuration first (written while it is stopped), then its accounter.
            try await link.write(commands.removeFirst())
            try await subscribeTimedGyro(plan.gyro)
        }
        for command in commands { try await link.write(command) }
        if plan.wantsShortInterval {
            await link.requestConnectionInterval(minimumMilliseconds: 7.5, maximumMilliseconds: 15)
        }
        streaming = true
    }

    /// Stops the streams in reverse order, then waits (up to the response timeout, at most
    /// 1 s: this runs while the gateway shuts down) for an answer from the board. The link is in order, so the answer means the board has carried
    /// out the stop commands before the caller disconnects: a MetaWear keeps streaming without
    /// a connection, and a stop overtaken by the disconnect would leave it streaming (and
    /// draining its battery) until the next connection resets it. Data in flight (a paced loop
    /// may have left a batch unread) arrives before the answer and is still passed on.
    public func stopStreaming() async throws {
        guard let plan else { return }
        streaming = false
        defer { phase = .quiet }
        for command in plan.stopCommands { try await link.write(command) }
        for id in [gyroAccounter, gyroPacker].compactMap({ $0 }) { try await link.write(DataProcessor.remove(id: id)) }
        _ = try await request(Gyro.readConfiguration(), answer: MetaWearModuleID.gyro.rawValue, 0x83,
                              what: "gyro configuration read after the stop", timeout: min(responseTimeout, .seconds(1)))
    }

    /// Creates the gyro's time accounter (after a packer of 2 when the plan packs) and subscribes
    /// to its output; a board that does not answer streams the raw signal instead, one sample per
    /// notification, stamped on arrival.
    private func subscribeTimedGyro(_ stream: StreamingPlan.Stream) async throws {
        guard let registers = info.gyroRegisters else { return }
        if stream.processorPacked {
            gyroPacker = await createProcessor(DataProcessor.createPacker(module: .gyro, register: registers.data, count: 2),
                                               what: "packer creation")
        }
        if !stream.processorPacked || gyroPacker != nil {
            let create = gyroPacker.map { DataProcessor.createTimeAccounter(packer: $0) }
                ?? DataProcessor.createTimeAccounter(module: .gyro, register: registers.data)
            gyroAccounter = await createProcessor(create, what: "time accounter creation")
        }
        if let gyroAccounter {
            for command in DataProcessor.subscribe(id: gyroAccounter) { try await link.write(command) }
        } else {
            if closed { throw BoardError.linkClosed }
            logger.warning("the board made no time accounter: gyro samples are stamped on arrival",
                           metadata: ["subsystem": "sensor"])
            try await link.write(try Gyro.subscribe(registers))
        }
    }

    /// The new processor's id, or nil when the board did not answer.
    private func createProcessor(_ command: MetaWearCommand, what: String) async -> UInt8? {
        guard let answer = try? await request(command, answer: MetaWearModuleID.dataProcessor.rawValue, 0x02, what: what),
              case .processorCreated(let id) = try? parser.parse(answer) else { return nil }
        return id
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

    // MARK: - Requests and notifications

    func request(_ command: MetaWearCommand, answer module: UInt8, _ register: UInt8, what: String,
                         timeout: Duration? = nil) async throws -> [UInt8]
    {
        if closed { throw BoardError.linkClosed }
        let key = UInt16(module) << 8 | UInt16(register)
        // The answer's arrival time matters (the log clock's reference), and so does its latency.
        loop.promptReads(+1)
        defer { loop.promptReads(-1) }
        nextWaiterID += 1
        let id = nextWaiterID
        let timeout = timeout ?? responseTimeout
        // A timer of the loop, not a sleeping task: a sleep's dispatch timer wakes two threads of
        // the global executor when it ends, even after the answer has cancelled it.
        // Strong (cancelled below when the answer comes): the board is referenced weakly nowhere,
        // see `initialise()`.
        let alarm = loop.makeAlarm()
        loop.schedule(after: timeout.seconds, tolerance: timeout.seconds / 16, alarm: alarm) { [board = self] in
            board.assumeIsolated { $0.fail(key: key, id: id, with: BoardError.timeout(what)) }
        }
        defer { loop.cancel(alarm) }
        return try await withCheckedThrowingContinuation { continuation in
            waiters[key] = Waiter(id: id, continuation: continuation)
            Task { [link] in
                do { try await link.write(command) } catch { self.fail(key: key, id: id, with: error) }
            }
        }
    }

    /// A board that streams the planned gyro configuration but whose samples have not arrived on
    /// this link yet (an initialisation can take less than a sample period): one is awaited for a
    /// few notification periods before the stop. Its stream then says exactly how many samples the
    /// board produced while the link was down, where the stop time says it only to within one.
    private func awaitStaleSample(_ plan: StreamingPlan) async {
        guard staleGyroMatches, !staleGyroDelivered, !closed else { return }
        let wait = min(2 * Double(plan.gyro.samplesPerNotification) / plan.gyro.odrHz + 0.05, 0.5)
        loop.promptReads(+1)
        defer { loop.promptReads(-1) }
        let alarm = loop.makeAlarm()
        loop.schedule(after: wait, tolerance: wait / 16, alarm: alarm) { [board = self] in
            board.assumeIsolated { $0.resumeStaleWaiter() }
        }
        defer { loop.cancel(alarm) }
        await withCheckedContinuation { staleWaiter = $0 }
    }

    private func resumeStaleWaiter() {
        staleWaiter.take()?.resume()
    }

    private func fail(key: UInt16, id: Int, with error: any Error) {
        guard let waiter = waiters[key], waiter.id == id else { return }
        waiters[key] = nil
        waiter.continuation.resume(throwing: error)
    }

    private func linkEnded() {
        closed = true
        resumeStaleWaiter()
        download?.fail(BoardError.linkClosed)
        for (_, waiter) in waiters { waiter.continuation.resume(throwing: BoardError.linkClosed) }
        waiters = [:]
    }

    /// When the notification being handled arrived: the clock is read at this board's first
    /// notification of each of the loop's reads and kept for the rest of that read, which arrived
    /// with it (a clock read per notification is a few percent of the data plane's time).
    /// Outside a read of the loop (a transport that delivers on its own), the clock is read.
    func arrival(_ now: () -> Double) -> Double {
        let read = loop.currentRead
        guard read != 0 else { return now() }
        if read != arrivalRead { (arrivalRead, readArrival) = (read, now()) }
        return readArrival
    }

    /// One notification, as the host read it (the slice is valid during this call only).
    func handle(_ bytes: ArraySlice<UInt8>, arrival: Double) {
        guard bytes.count >= 2 else { return }
        // The module first: `download != nil` copies the download's state.
        if bytes[bytes.startIndex] == MetaWearModuleID.logging.rawValue, download != nil, readout(bytes) { return }
        if phase != .discovering, let data = parser.dataSamples(bytes) {
            switch data {
            case .gyro(let samples): gyroData(samples, arrival: arrival)
            case .accelerometer(let samples): accelerometerData(samples, arrival: arrival)
            }
            return
        }
        if phase != .discovering, let timed = parser.timedSamples(bytes) {
            timedGyroData(timed.processor, tick: timed.tick, timed.samples, arrival: arrival)
            return
        }
        let start = bytes.startIndex
        // A read answer (bit 0x80, silent bit folded), or a creation's id (`0b 02 <id>`), may
        // complete a request.
        if bytes[start + 1] & 0x80 != 0 || !waiters.isEmpty {
            let register = bytes[start + 1] & 0x80 != 0 ? bytes[start + 1] & ~MetaWearRegister.silentBit : bytes[start + 1]
            let key = UInt16(bytes[start]) << 8 | UInt16(register)
            if let waiter = waiters.removeValue(forKey: key) {
                answerArrival = arrival
                waiter.continuation.resume(returning: Array(bytes))
                return
            }
        }
        if phase == .discovering {
            let data = bytes[start] == MetaWearModuleID.gyro.rawValue
                || (bytes[start] == MetaWearModuleID.dataProcessor.rawValue && bytes[start + 1] == DataProcessor.outputRegister)
            if data, early.count < 100_000 { early.append((Array(bytes), arrival)) }
            return
        }
        let packet: MetaWearPacket
        do { packet = try parser.parse(Array(bytes)) } catch {
            logger.debug("dropped notification", metadata: ["subsystem": "sensor", "error": "\(error)"])
            return
        }
        switch packet {
        case .gyroData(let samples), .gyroPacked(let samples):
            gyroData(samples, arrival: arrival)
        case .accData(let samples), .accPacked(let samples):
            accelerometerData(samples, arrival: arrival)
        case .switchState(let state):
            onEvent(.button(state))
        case .battery(let state):
            battery = state
            onEvent(.battery(state))
        default:
            break
        }
    }

    private func gyroData(_ samples: RawTriples, arrival: Double, boardTime: Double? = nil) {
        if phase == .stale {
            guard staleGyroMatches, let plan, samples.count == plan.gyro.samplesPerNotification,
                  plan.gyro.boardTime == (boardTime != nil) else { return }
            staleGyroDelivered = true
            resumeStaleWaiter()
        } else if phase != .streaming {
            return
        }
        lastDataArrival = arrival
        onEvent(.samples(.gyro, samples, arrival: boardTime ?? arrival))
    }

    /// Samples of the gyro's time accounter: passed on stamped with when the board produced the
    /// last, as the end of its tick in host time (so never before it was produced, like an arrival).
    /// Before the reset (stale), the accounter is the one this gateway made on the last link: the
    /// reset sequence removes every processor, and the gateway makes no other.
    private func timedGyroData(_ processor: UInt8, tick: UInt32, _ samples: RawTriples, arrival: Double) {
        guard phase == .stale || processor == gyroAccounter, let clock else { return }
        let produced = clock.resetTime + (Double(ticks.unwrap(tick)) + 1) * Logging.tickMilliseconds / 1000
        gyroData(samples, arrival: arrival, boardTime: produced)
    }

    private func accelerometerData(_ samples: RawTriples, arrival: Double) {
        guard phase == .streaming else { return }
        lastDataArrival = arrival
        onEvent(.samples(.accelerometer, samples, arrival: arrival))
    }
}
