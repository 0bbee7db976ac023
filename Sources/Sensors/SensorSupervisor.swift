import BLEHost
import Capture
import GyroStore
import Logging
import MetaWear

/// How supervisors behave; the same for every sensor of a gateway.
public struct SupervisorSettings: Sendable {
    public var board: BoardOptions
    public var connectTimeout: Duration
    /// The watchdog fires after max(3 notification intervals, this) without data.
    public var silenceFloor: Duration
    public var batteryInterval: Duration
    /// A button press starts a session when none is open and stops the open one otherwise.
    public var buttonControlsSession: Bool
    public var backoff: Backoff
    /// How long a suspected in-connection gap is held for confirmation (see ``StreamTracker``).
    public var gapConfirmation: Duration
    /// How long the start of each stream is held to anchor its clock (at most `gapConfirmation`);
    /// nothing reaches the store before it has passed, so it counts towards the crash window.
    public var warmUp: Duration

    public init(board: BoardOptions = BoardOptions(), connectTimeout: Duration = .seconds(10),
                silenceFloor: Duration = .seconds(1), batteryInterval: Duration = .seconds(300),
                buttonControlsSession: Bool = false, backoff: Backoff = Backoff(),
                gapConfirmation: Duration = .milliseconds(500), warmUp: Duration = .milliseconds(500)) {
        self.board = board
        self.connectTimeout = connectTimeout
        self.silenceFloor = silenceFloor
        self.batteryInterval = batteryInterval
        self.buttonControlsSession = buttonControlsSession
        self.backoff = backoff
        self.gapConfirmation = gapConfirmation
        self.warmUp = warmUp
    }
}

/// Keeps one sensor streaming into the capture engine, whatever happens to the link.
///
/// State machine: discovered → connecting → initialising → streaming, with silent (watchdog:
/// connected, no data for max(3 notification intervals, ``SupervisorSettings/silenceFloor``))
/// → initialising again on the same link, and backingOff (``Backoff``, never giving up) after
/// any failure or disconnection. Every initialisation is a full one (``MetaWearBoard``), so a
/// board left streaming, restarted, or configured by someone else is brought to a known state.
///
/// Samples go through one ``StreamTracker`` per stream, which lives as long as the supervisor:
/// stream indices continue across reconnects, and the samples lost in between are declared
/// missing, so the capture engine records the gap with the reason (`disconnected …`, `silent`).
/// The supervisor runs on the data plane's loop, where its board delivers each notification:
/// tracking, stamping and gap checks happen synchronously as packets are read, and samples and
/// button-driven session changes are left, in order, in the engine's ``CaptureFeed``, which the
/// engine takes in batches.
///
/// ``run(connector:)`` may be called again after it returned, with a connector of a new
/// controller (the old one went away): the trackers, and so the stream indices and the gap of
/// the interruption, carry over.
public actor SensorSupervisor {
    public nonisolated let address: String
    public nonisolated let identity: SensorIdentity
    let engine: CaptureEngine
    let settings: SupervisorSettings
    let logger: Logger
    let now: @Sendable () -> Double

    var current: SensorStatus
    private var trackers = StreamTrackers()
    var plan: StreamingPlan? {
        didSet { shapes = (plan.map { FeedShape($0.gyro) }, plan?.accelerometer.map(FeedShape.init)) }
    }
    /// What the capture feed needs of the planned streams, apart from the plan: a notification
    /// copies two numbers, not the plan's arrays.
    private var shapes: (gyro: FeedShape?, accelerometer: FeedShape?) = (nil, nil)
    /// The capture feed's lanes of this sensor's streams, looked up once.
    private let lanes: (gyro: CaptureFeed.Lane, accelerometer: CaptureFeed.Lane)
    private var pendingGapReason: String?
    private var lastDataArrival: Double?
    private var linkDown: String?
    /// Counts ``watchPaced(_:)`` turns, so that a late timer of an old turn does nothing; and
    /// whether this turn's reads are batched yet (it released its prompt-read hold).
    private var pacing = 0
    private var pacingStarted = false
    /// The streaming watch's timer; `linkWentDown` rings it.
    private var watchAlarm: DataPlaneLoop.Alarm?
    /// The watch's check, made once per wait and scheduled again at every re-arm (a check that
    /// finds data re-arms about once a second per sensor): no closure per re-arm, and no
    /// `assumeIsolated` lookup of the executor per firing. Holds the supervisor until the wait ends.
    private var watchCheck: (@Sendable () -> Void)?
    private var watchSilence = 0.0
    private var watchNextBattery = 0.0
    /// The watching task, asleep until its check has something to do.
    private var watchWaiter: CheckedContinuation<Void, Never>?
    private var connectedOnce = false
    /// The board's log clock at the last initialisation: a new `reset_uid` means it reset since.
    private var boardClock: BoardClock?
    /// Host time (s) of tick 0 of each of the board's power cycles seen: what places log entries in time.
    var resetTimes: [UInt8: Double] = [:]
    /// Where the gyro stream of a session an earlier run of the gateway left open goes on (backfill
    /// only), until the first plan; and the board's samples that came before it, stale from its
    /// stream of that run.
    private var continuation: (nextIndex: Int64, lastMs: Double)?
    private var accelerometerContinuation: (nextIndex: Int64, lastMs: Double)?
    private var staleBeforePlan: [(samples: RawTriples, arrival: Double)] = []
    /// Whether the gyro tracker released samples since the streams (re)started, and who waits for it.
    var releasedSinceRestart = false
    var releaseWaiter: CheckedContinuation<Void, Never>?
    /// The last sample's time (epoch ms) when this connection began: a backfill keeps what came after.
    var lastSampleBeforeConnect: Double?
    /// When the last link went down (host seconds).
    private var linkDownAt: Double?
    /// The last backfill stored what the log held: older entries may go (a failed one keeps them).
    var logTrimmable = false
    /// Answer timeouts double after a timeout (a board answering slowly), up to 8×; reset on success.
    private var timeoutScale = 1
    /// Data a board sent before a discovery that failed; parsed on the next link.
    private var unparsed: [([UInt8], Double)] = []
    /// The thread this supervisor runs on; its boards' links should deliver there too.
    public nonisolated let loop: DataPlaneLoop

    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    public init(address: String, identity: SensorIdentity, engine: CaptureEngine,
                settings: SupervisorSettings, logger: Logger, now: @escaping @Sendable () -> Double = HostClock().now,
                loop: DataPlaneLoop = .shared) {
        self.address = address
        self.identity = identity
        self.engine = engine
        self.settings = settings
        var logger = logger
        logger[metadataKey: "subsystem"] = "sensor"
        logger[metadataKey: "sensor"] = "\(address)"
        self.logger = logger
        self.now = now
        current = SensorStatus(address: address, userId: identity.userId, state: .discovered,
                               odrHz: settings.board.gyro.outputDataRate.hertz)
        current.transitions[.discovered] = 1
        current.backfill = settings.board.backfill != nil
        self.loop = loop
        lanes = (engine.feed.lane(sensor: identity, stream: .gyro), engine.feed.lane(sensor: identity, stream: .accelerometer))
    }

    /// The sensor's status; the sample counts are read from the gyro stream's tracker here,
    /// not kept up to date on every notification.
    public func status() -> SensorStatus {
        var status = current
        if let tracker = trackers[.gyro] {
            // Held samples are received but have no index yet: counting them as expected keeps
            // received <= expected while a suspected gap is being confirmed.
            status.samplesExpected = tracker.nextIndex + Int64(tracker.heldSampleCount)
            status.samplesReceived = tracker.receivedSamples
            status.gaps = tracker.gapCount
            status.missingSamples = tracker.missingSamples
        }
        return status
    }

    // MARK: - Lifecycle

    /// Runs until the task is cancelled; then stops the board's streams, disconnects, and hands
    /// the last held samples to the engine before returning.
    public func run(connector: any MetaWearConnector) async {
        if settings.board.backfill != nil, resetTimes.isEmpty {
            // Log entries of a power cycle this process never saw are placed through the time saved then.
            resetTimes = (try? await engine.store.boardResetTimes(device: address)) ?? [:]
            continuation = await engine.continuation(device: identity.device, stream: .gyro)
            accelerometerContinuation = await engine.continuation(device: identity.device, stream: .accelerometer)
        }
        var attempt = 0
        while !Task.isCancelled {
            let streamed = await connectAndStream(connector)
            if Task.isCancelled { break }
            if streamed { attempt = 0 }
            let delay = settings.backoff.delay(attempt: attempt)
            attempt += 1
            transition(to: .backingOff, ["delay_ms": "\(Int(delay.seconds * 1000))"])
            // The loop's timer: a sleeping task's dispatch timer would wake two other threads.
            try? await loop.sleep(for: delay.seconds)
        }
        flushTrackers()
        transition(to: .stopped)
        await drainFeed()
    }

    /// One connection: returns whether it reached streaming.
    private func connectAndStream(_ connector: any MetaWearConnector) async -> Bool {
        // Connecting and initialising need each answer at once; only a board-time stream lets
        // the loop batch its reads (``watchPaced(_:)``). A sensor backing off holds nothing.
        loop.promptReads(+1)
        defer { loop.promptReads(-1) }
        transition(to: .connecting)
        let link: any MetaWearLink
        do {
            link = try await connector.connect(address: address, timeout: settings.connectTimeout)
        } catch {
            current.failedAttempts += 1
            current.lastError = "\(error)"
            logger.warning("connect failed", metadata: ["error": "\(error)"])
            return false
        }
        if connectedOnce { current.reconnects += 1 }
        lastSampleBeforeConnect = current.lastSampleMs ?? continuation?.lastMs
        connectedOnce = true
        linkDown = nil
        let loop = self.loop
        let handle = loop.entry(into: SensorSupervisor.self) { supervisor, event in supervisor.handle(event) }
        // Not weak (here and in the loop's timers): the supervisor is retained and released on
        // every notification, and a weakly referenced object gets a side table, which makes each
        // of those slower. The board holds this until its link goes down, which this function
        // makes sure of before it returns.
        let board = MetaWearBoard(link: link, options: settings.board, logger: logger, knownResetTimes: resetTimes, now: now) { event in
            // The board runs on its link's loop; the gateway gives both the same one.
            if loop.inLoop {
                handle(self, event)
            } else {
                loop.execute { self.assumeIsolated { $0.handle(event) } }
            }
        }
        await board.keep(unparsed)
        unparsed = []
        let watcher = Task { let reason = await link.waitForDisconnection(); self.linkWentDown(reason) }
        var streamed = false
        var failures = 0
        recovery: while !Task.isCancelled {
            transition(to: .initialising)
            do {
                await board.setResponseTimeout(settings.board.responseTimeout * timeoutScale)
                try await initialiseAndStart(board)
                failures = 0
                timeoutScale = 1
            } catch {
                if case BoardError.timeout = error { timeoutScale = min(timeoutScale * 2, 8) }
                current.lastError = "\(error)"
                logger.warning("initialisation failed", metadata: ["error": "\(error)"])
                // The first cause names the gap (a silent board that then fails discovery stays "silent").
                setGapReason(pendingGapReason ?? linkDown.map { "disconnected (\($0))" } ?? "initialisation failed")
                // A board that missed an answer (busy, briefly mute) gets two more tries on this link,
                // which keeps the data it sends meanwhile; then the link is dropped and made again.
                failures += 1
                if linkDown == nil, failures < 3 { continue recovery }
                break recovery
            }
            streamed = true
            transition(to: .streaming)
            if settings.board.backfill != nil { await backfill(from: board) }
            switch await watchPaced(board) {
            case .cancelled:
                try? await board.stopStreaming()
                break recovery
            case .silent:
                transition(to: .silent)
                setGapReason("silent")
                // Re-initialise on the same link; a board that stays mute fails discovery and we reconnect.
                continue recovery
            case .disconnected(let reason):
                setGapReason("disconnected (\(reason))")
                logger.notice("link lost", metadata: ["reason": "\(reason)"])
                break recovery
            }
        }
        await board.close()
        unparsed = await board.takeUnparsed()
        await settle()  // every event of this board handled, in order
        flushTrackers()
        await link.disconnect()
        _ = await watcher.value
        // Cancelled because the controller went away (the link went down first, so its reason is
        // kept): the next run, on a new controller, names the gap of the interruption with it.
        if Task.isCancelled, pendingGapReason == nil, let linkDown { pendingGapReason = "disconnected (\(linkDown))" }
        return streamed
    }

    private func initialiseAndStart(_ board: MetaWearBoard) async throws {
        let info = try await board.initialise()
        current.model = info.model.rawValue
        current.firmware = info.firmwareRevision
        lastDataArrival = now()
        try await board.startStreaming()
        current.boardTime = await board.gyroAccounter != nil
        if let battery = try? await board.readBattery() { record(battery) }
    }

    enum WatchOutcome { case cancelled, silent, disconnected(String) }

    /// ``watch(_:)``, letting the loop batch its reads meanwhile when every sample of this
    /// sensor carries the board's time (the gyro through its accounter, no accelerometer).
    ///
    /// Batching starts after the stream's warm-up and one commit interval: a crash right after a
    /// stream starts then loses at most a commit interval of samples, as without it.
    private func watchPaced(_ board: MetaWearBoard) async -> WatchOutcome {
        guard let plan, plan.gyro.boardTime, plan.accelerometer == nil, await board.gyroAccounter != nil else {
            return await watch(board)
        }
        pacing += 1
        let turn = pacing
        loop.pacedStream(+1)
        let delay = settings.warmUp.seconds + engine.rules.commitInterval.seconds
        loop.schedule(after: delay, tolerance: 0.1, alarm: loop.makeAlarm()) {
            self.assumeIsolated { supervisor in
                guard supervisor.pacing == turn, !supervisor.pacingStarted else { return }
                supervisor.pacingStarted = true
                supervisor.loop.promptReads(-1)
            }
        }
        defer {
            pacing += 1
            if pacingStarted { loop.promptReads(+1) }
            pacingStarted = false
            loop.pacedStream(-1)
        }
        return await watch(board)
    }

    /// Waits while streaming until the link goes down, the run is cancelled or the board falls
    /// silent, reading the battery on time. It sleeps until the earlier of the silence deadline
    /// and the battery time; data arriving meanwhile only moves the deadline (checked when the
    /// timer fires), and a lost link or a cancellation ends the sleep at once.
    private func watch(_ board: MetaWearBoard) async -> WatchOutcome {
        let rate = (plan?.gyro.notificationsPerSecond ?? 1)
        let silence = max(3 / rate, settings.silenceFloor.seconds)
        var nextBattery = now() + settings.batteryInterval.seconds
        while true {
            // The link first: a controller that goes away both ends the links and cancels the run.
            if let linkDown { return .disconnected(linkDown) }
            if Task.isCancelled { return .cancelled }
            let time = now()
            let lastData = lastDataArrival ?? time
            if time - lastData > silence {
                logger.warning("no data", metadata: ["seconds": "\(time - lastData)"])
                return .silent
            }
            if time >= nextBattery {
                nextBattery = time + settings.batteryInterval.seconds
                if let battery = try? await board.readBattery() { record(battery) }
                if logTrimmable, let plan, let backfill = settings.board.backfill {
                    // What came before the last `keep` was streamed, and backfilled where it was not.
                    try? await board.trimLog(keeping: UInt32(min(2 * plan.gyro.odrHz * backfill.keep.seconds, 1e9)))
                }
                continue
            }
            await waitForWatch(silence: silence, nextBattery: nextBattery)
        }
    }

    /// Returns when the link goes down, the task is cancelled, the stream has been silent for
    /// `silence`, or the battery is due. While notifications keep coming, the check re-arms itself
    /// on the loop's timer, on the data plane's thread, and the watching task stays asleep.
    private func waitForWatch(silence: Double, nextBattery: Double) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                watchWaiter = continuation
                (watchSilence, watchNextBattery) = (silence, nextBattery)
                let check = loop.entry(into: SensorSupervisor.self) { (supervisor: isolated SensorSupervisor, _: Void) in supervisor.checkWatch() }
                watchCheck = { check(self, ()) }
                armWatch(at: now())
            }
        } onCancel: { [loop] in
            loop.execute { self.assumeIsolated { $0.endWatchWait() } }
        }
    }

    /// Late by up to a quarter of the silence allowance, so that the timer fires at a wake-up the
    /// loop makes for the notifications anyway; just past the deadline, so that `watch` sees it passed.
    private func armWatch(at time: Double) {
        guard let watchCheck else { return }
        let alarm = loop.makeAlarm()
        watchAlarm = alarm
        let due = min((lastDataArrival ?? time) + watchSilence, watchNextBattery)
        loop.schedule(after: due - time + 0.001, tolerance: watchSilence / 4, alarm: alarm, watchCheck)
    }

    private func checkWatch() {
        guard watchAlarm != nil, watchWaiter != nil else { return }
        watchAlarm = nil
        let time = now()
        if linkDown == nil, time < min((lastDataArrival ?? time) + watchSilence, watchNextBattery) {
            armWatch(at: time)
        } else {
            endWatchWait()
        }
    }

    private func endWatchWait() {
        // A timer still set (the wait was cancelled) must not check a later wait.
        if let watchAlarm { loop.cancel(watchAlarm) }
        watchAlarm = nil
        watchCheck = nil
        watchWaiter?.resume()
        watchWaiter = nil
    }

    /// Names the gap the interruption will leave, whichever way it is found: from the arrival
    /// times of a stream the board kept running, or from the stop time at the next restart.
    private func setGapReason(_ reason: String) {
        pendingGapReason = reason
        for module in trackers.modules { trackers.update(module) { $0.nextGapReason = reason } }
    }

    private func linkWentDown(_ reason: String) {
        linkDown = reason
        linkDownAt = now()
        if let watchAlarm { loop.ring(watchAlarm) }
    }

    // MARK: - Events

    private func handle(_ event: BoardEvent) {
        switch event {
        case .samples(let module, let raw, let arrival):
            // Stale data before any plan: dropped. (Tested through `shapes`, set with the plan:
            // `plan != nil` copies the plan.)
            guard shapes.gyro != nil else {
                // Kept when they continue a session of an earlier run: they tell where it went on.
                if continuation != nil, module == .gyro, staleBeforePlan.count < 100_000 { staleBeforePlan.append((raw, arrival)) }
                return
            }
            let stream = module == .gyro ? shapes.gyro : shapes.accelerometer
            // Pushed in place: a copy of the tracker would copy its buffers on every notification.
            let pushed: Void? = trackers.update(module) { tracker in
                tracker.push(raw, arrival: arrival) { enqueue(module, stream, $0) }
            }
            if pushed != nil { lastDataArrival = arrival }
        case .button(let state):
            guard state.isPressed else { return }
            logger.info("button pressed")
            if settings.buttonControlsSession {
                engine.feed.toggleSession(identity, atMs: now() * 1000)
                Task { [engine] in await engine.ingestFeed() }
            }
        case .battery(let battery):
            record(battery)
        case .restarted(let plan, let restart):
            restartStreams(plan, restart)
        case .clock(let clock):
            clockRead(clock)
        }
    }

    /// A new `reset_uid` since the last reading: the board reset, which ended its streams. A board
    /// that resumes them (its stale samples follow) starts a new run of its counter at the reset.
    private func clockRead(_ clock: BoardClock) {
        let reset = boardClock.map { $0.resetUID != clock.resetUID } ?? false
        boardClock = clock
        if settings.board.backfill != nil, abs((resetTimes[clock.resetUID] ?? -1) - clock.resetTime) > 0.5 {
            let (store, address) = (engine.store, address)
            Task { try? await store.saveBoardResetTime(device: address, resetUID: clock.resetUID, resetTime: clock.resetTime) }
        }
        resetTimes[clock.resetUID] = clock.resetTime
        guard reset else { return }
        logger.notice("the board reset since the last connection", metadata: ["resetUID": "\(clock.resetUID)"])
        // A reset drops the link at once: a link that went down clearly before it went out of reach.
        let linkUp = (linkDownAt ?? .infinity) >= clock.resetTime - 0.02
        flushTrackers()
        for module in trackers.modules {
            trackers.update(module) { $0.restart(end: .reset(at: clock.resetTime, linkUp: linkUp), reason: "board reset") }
        }
    }

    /// Hands out what the trackers hold, then continues each stream's index after the samples the
    /// board produced and never delivered (or starts new trackers).
    private func restartStreams(_ plan: StreamingPlan, _ restart: StreamRestart) {
        flushTrackers()
        releasedSinceRestart = false
        self.plan = plan
        let end = restart.end
        for stream in [plan.gyro] + (plan.accelerometer.map { [$0] } ?? []) {
            if var tracker = trackers[stream.module], tracker.odrHz == stream.odrHz {
                tracker.restart(end: end, reason: pendingGapReason ?? "reinitialised")
                trackers[stream.module] = tracker
            } else if let resume = stream.module == .gyro ? continuation : accelerometerContinuation {
                trackers[stream.module] = continued(stream, resume, restart)
            } else {
                trackers[stream.module] = StreamTracker(odrHz: stream.odrHz, decoder: stream.decoder,
                                                        confirmationWindow: settings.gapConfirmation.seconds,
                                                        warmUpWindow: settings.warmUp.seconds,
                                                        stampResolution: stream.boardTime ? Logging.tickMilliseconds / 1000 : 0)
            }
        }
        pendingGapReason = nil
    }

    /// The tracker of a stream of a session an earlier run left open: its index goes on after the
    /// last stored sample. The board streamed on meanwhile; with board time, the stale gyro samples
    /// (kept before the plan) say exactly how many it produced in between, which are then missing
    /// until the backfill fills them from the log; otherwise the stop time says it, ±1.
    private func continued(_ stream: StreamingPlan.Stream, _ resume: (nextIndex: Int64, lastMs: Double), _ restart: StreamRestart) -> StreamTracker {
        var stale: [(samples: RawTriples, arrival: Double)] = []
        if stream.module == .gyro {
            continuation = nil
            stale = staleBeforePlan
            staleBeforePlan = []
        } else {
            accelerometerContinuation = nil
        }
        var tracker = StreamTracker(odrHz: stream.odrHz, decoder: stream.decoder, confirmationWindow: settings.gapConfirmation.seconds,
                                    warmUpWindow: settings.warmUp.seconds,
                                    stampResolution: stream.boardTime ? Logging.tickMilliseconds / 1000 : 0)
        let reason = "gateway restarted"
        let last = resume.lastMs / 1000
        guard stream.boardTime, restart.staleDelivered, let first = stale.first else {
            // Stale samples reached no tracker: the stream ran at most until the stop.
            tracker.resume(at: resume.nextIndex, lastStamp: last, reason: reason)
            tracker.restart(end: .stopped(at: restart.stopTime), reason: reason)
            return tracker
        }
        let firstDue = first.arrival - Double(first.samples.count - 1) / stream.odrHz
        let missing = max(0, Int64(((firstDue - last) * stream.odrHz).rounded()) - 1)
        tracker.resume(at: resume.nextIndex + missing, lastStamp: nil, reason: reason)
        let shape = shapes.gyro
        for (samples, arrival) in stale { tracker.push(samples, arrival: arrival) { enqueue(.gyro, shape, $0) } }
        tracker.flush { enqueue(.gyro, shape, $0) }
        tracker.restart(end: .delivered, reason: reason)
        logger.notice("continuing the session of an earlier run", metadata: ["index": "\(resume.nextIndex)", "missing": "\(missing)"])
        return tracker
    }

    private func enqueue(_ module: MetaWearModuleID, _ stream: FeedShape?, _ batch: StreamTracker.Batch) {
        guard let stream, let first = batch.samples.first, let last = batch.samples.last else { return }
        let samples = batch.samples
        // The commit deadline counts from when the first sample arrived (its stamp is at most
        // that), not from when the tracker let it go.
        engine.feed.append(module == .gyro ? lanes.gyro : lanes.accelerometer, odrHz: stream.odrHz, range: stream.range,
                           firstIndex: batch.firstIndex, gapReason: batch.gapReason,
                           receivedAt: ContinuousClock.now - .seconds(max(0, now() - first.time)),
                           count: samples.count) { index in
            let sample = samples[index]
            return StoredSample(timestampMs: sample.time * 1000, x: Float(sample.x), y: Float(sample.y), z: Float(sample.z))
        }
        current.lastSampleMs = last.time * 1000
        if module == .gyro, !releasedSinceRestart {
            releasedSinceRestart = true
            endReleaseWait()
        }
    }

    private func flushTrackers() {
        for module in trackers.modules {
            let stream = module == .gyro ? shapes.gyro : shapes.accelerometer
            trackers.update(module) { $0.flush { enqueue(module, stream, $0) } }
        }
    }

    private func record(_ battery: Settings.BatteryState) {
        current.batteryPercent = Int(battery.chargePercent)
        current.batteryMillivolts = Int(battery.voltageMillivolts)
    }

    private func transition(to state: SensorState, _ metadata: Logger.Metadata = [:]) {
        let from = current.state
        current.state = state
        current.transitions[state, default: 0] += 1
        var fields = metadata
        fields["from"] = "\(from.rawValue)"
        fields["to"] = "\(state.rawValue)"
        logger.info("state", metadata: fields)
    }

    // MARK: - Feeding the engine

    /// Waits until everything handed to the feed so far has reached the engine.
    public func drainFeed() async {
        await engine.ingestFeed()
    }

    /// Lets events that the board queued on the loop from another thread run first.
    private func settle() async {
        await withCheckedContinuation { continuation in loop.execute { continuation.resume() } }
    }
}

/// A planned stream as the capture feed records it.
private struct FeedShape {
    var odrHz: Double
    var range: Double

    init(_ stream: StreamingPlan.Stream) {
        odrHz = stream.odrHz
        range = stream.range
    }
}

extension DataPlaneLoop {
    /// ``BLEHost/DataPlaneLoop/entry(into:_:)`` for a board's events, with the argument's type
    /// spelled out: through the generic one, every event passes two reabstraction thunks.
    fileprivate func entry<A: Actor>(into _: A.Type, _ body: @escaping @Sendable (isolated A, BoardEvent) -> Void)
        -> @Sendable (A, BoardEvent) -> Void
    {
        let call = unsafeBitCast(body, to: (@Sendable (A, BoardEvent) -> Void).self)
        return { [self] actor, event in
            checkIsolated()
            call(actor, event)
        }
    }
}
