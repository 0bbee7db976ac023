import CaptureValues
import BLEHost
import Capture
import GyroStore
import HostTime
import Logging
import MetaWear
import PosixThreads

/// Keeps one sensor streaming into the capture engine, whatever happens to the link.
///
/// State machine: discovered → connecting → initialising → streaming, with silent (watchdog:
/// connected, no data for max(3 notification intervals, ``SupervisorSettings/silenceFloor``))
/// → initialising again on the same link, and backingOff (``Backoff``, never giving up) after
/// any failure or disconnection. Every initialisation is a full one (``MetaWearBoard``), so a
/// board left streaming, restarted, or configured by someone else is brought to a known state.
///
/// Samples go through one `StreamTracker` per stream, which lives as long as the supervisor:
/// stream indices continue across reconnects, and the samples lost in between are declared
/// missing, so the capture engine records the gap with the reason (`disconnected …`, `silent`).
/// The supervisor runs on the data plane's loop, where its board delivers each notification:
/// tracking, stamping and gap checks happen synchronously as packets are read, and samples and
/// button-driven session changes are left, in order, in the engine's `CaptureFeed`, which the
/// engine takes in batches.
///
/// ``run(connector:)`` may be called again after it returned, with a connector of a new
/// controller (the old one went away): the trackers, and so the stream indices and the gap of
/// the interruption, carry over.
public actor SensorSupervisor {
    public nonisolated let address: String
    public nonisolated let identity: SensorIdentity
    let engine: any CaptureSink
    /// The engine's feed, looked up once: every batch of samples goes there.
    let feed: CaptureFeed
    let settings: SupervisorSettings
    let logger: Logger
    let now: @Sendable () -> Double

    var current: SensorStatus
    var trackers = StreamTrackers()
    var plan: StreamingPlan? {
        didSet { shapes = (plan.map { FeedShape($0.gyro) }, plan?.accelerometer.map(FeedShape.init)) }
    }
    /// What the capture feed needs of the planned streams, apart from the plan: a notification
    /// copies two numbers, not the plan's arrays.
    var shapes: (gyro: FeedShape?, accelerometer: FeedShape?) = (nil, nil)
    /// The capture feed's lanes of this sensor's streams, looked up once.
    let lanes: (gyro: CaptureFeed.Lane, accelerometer: CaptureFeed.Lane)
    var pendingGapReason: GapReason?
    var lastDataArrival: Double?
    var linkDown: String?
    /// The prompt reads ``connectAndStream(_:)`` holds for its connection, until
    /// ``watchPaced(_:)`` releases them to let its stream batch reads.
    var connectionHold: ThreadExecutor.PromptReadHold?
    /// Counts ``watchPaced(_:)`` turns, so that a late timer of an old turn does nothing; and
    /// whether this turn's reads are batched yet (it released ``connectionHold``).
    var pacing = 0
    var pacingStarted = false
    /// The streaming watch's timer; `linkWentDown` rings it.
    var watchAlarm: ThreadExecutor.Alarm?
    /// The watch's check, made once per wait and scheduled again at every re-arm (a check that
    /// finds data re-arms about once a second per sensor): no closure per re-arm, and no
    /// `assumeIsolated` lookup of the executor per firing. Holds the supervisor until the wait ends.
    var watchCheck: (@Sendable () -> Void)?
    var watchSilence = 0.0
    var watchNextBattery = 0.0
    /// The watching task, asleep until its check has something to do.
    var watchWaiter: CheckedContinuation<Void, Never>?
    var connectedOnce = false
    /// Connected here since the last fleet hand-over: a session of the board may be open here.
    var linkedSinceHandOver = false
    /// The board's log clock at the last initialisation: a new `reset_uid` means it reset since.
    var boardClock: BoardClock?
    /// Host time (s) of tick 0 of each of the board's power cycles seen: what places log entries in time.
    var resetTimes: [UInt8: Double] = [:]
    /// Where the gyro stream of a session an earlier run of the gateway left open goes on (backfill
    /// only), until the first plan; and the board's samples that came before it, stale from its
    /// stream of that run.
    var continuation: (nextIndex: Int64, lastMs: Double)?
    var accelerometerContinuation: (nextIndex: Int64, lastMs: Double)?
    /// What the samples between the continued session's last one and the first of this link are
    /// missing for: a restart of this gateway, or a hand-over from another (``takeHandoff()``).
    var continuationReason = GapReason.gatewayRestarted
    var staleBeforePlan: [(samples: RawTriples, arrival: Double)] = []
    /// Whether the gyro tracker released samples since the streams (re)started, and who waits for it.
    var releasedSinceRestart = false
    var releaseWaiter: CheckedContinuation<Void, Never>?
    /// The last sample's time (epoch ms) when this connection began: a backfill keeps what came after.
    var lastSampleBeforeConnect: Double?
    /// Board time (s) of the last gyro notification pushed to its tracker, in the frame of ``boardClock``.
    var lastGyroTime: Double?
    /// A board reset whose count of lost samples waits for the log's download (``settleResetCount(from:)``):
    /// the power cycle that ended, and the board time of its last gyro notification received.
    var pendingResetCount: (resetUID: UInt8, lastGyroTime: Double)?
    /// When the last link went down (host seconds).
    var linkDownAt: Double?
    /// The last backfill stored what the log held: older entries may go (a failed one keeps them).
    var logTrimmable = false
    /// Answer timeouts double after a timeout (a board answering slowly), up to 8×; reset on success.
    var timeoutScale = 1
    /// The running initialisation and its deadline's turn (``initialiseWithinDeadline(_:)``).
    var initialisationTurn = 0
    var settledInitialisationTurn = 0
    var initialisationWaiter: (turn: Int, continuation: CheckedContinuation<Result<Void, any Error>?, Never>)?
    var earlyInitialisationOutcome: (turn: Int, outcome: Result<Void, any Error>?)?
    /// Data a board sent before a discovery that failed; parsed on the next link.
    var unparsed: [([UInt8], Double)] = []
    /// The thread this supervisor runs on; its boards' links should deliver there too.
    public nonisolated let loop: ThreadExecutor

    public nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }

    public init(address: String, identity: SensorIdentity, engine: any CaptureSink,
                settings: SupervisorSettings, logger: Logger, now: @escaping @Sendable () -> Double = GatewayClock.process.timeline,
                loop: ThreadExecutor = .dataPlane) {
        self.address = address
        self.identity = identity
        self.engine = engine
        feed = engine.feed
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
        lanes = (feed.lane(sensor: identity, stream: .gyro), feed.lane(sensor: identity, stream: .accelerometer))
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
            resetTimes = (try? await engine.boardResetTimes(device: address)) ?? [:]
            continuation = await engine.continuation(device: identity.device, stream: .gyro)
            accelerometerContinuation = await engine.continuation(device: identity.device, stream: .accelerometer)
        }
        var attempt = 0
        while !Task.isCancelled {
            switch await awaitTurn() {
            case .cancelled: break
            // Another gateway had it: this one's earlier failures say nothing of the next attempt.
            case .afterWaiting: attempt = 0
            case .atOnce: ()
            }
            if Task.isCancelled { break }
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
        // Held until ``watchPaced(_:)`` lets a board-time stream batch reads (ReadPacingPolicy);
        // a sensor backing off holds nothing.
        connectionHold = ReadPacingPolicy.holdForConnection(on: loop)
        defer { connectionHold = nil }
        transition(to: .connecting)
        let link: any MetaWearLink
        do {
            link = try await connectUnlessTaken(connector)
        } catch {
            current.failedAttempts += 1
            current.lastError = "\(error)"
            logger.warning("connect failed", metadata: ["error": "\(error)"])
            return false
        }
        await claimLink(true)
        await takeHandoff()
        if connectedOnce { current.reconnects += 1 }
        lastSampleBeforeConnect = current.lastSampleMs ?? continuation?.lastMs
        connectedOnce = true
        linkDown = nil
        let loop = self.loop
        // Not weak (here and in the loop's timers): the supervisor is retained and released on
        // every batch, and a weakly referenced object gets a side table, which makes each of
        // those slower. The board holds this until its link goes down, which this function
        // makes sure of before it returns.
        let board = MetaWearBoard(link: link, options: settings.board, logger: logger, knownResetTimes: resetTimes, now: now) { events in
            // The board runs on its link's loop; the gateway gives both the same one. A batch's
            // events come together, so the supervisor is entered once for them.
            if loop.isCurrent {
                self.assumeIsolated { supervisor in for event in events { supervisor.handle(event) } }
            } else {
                loop.execute { self.assumeIsolated { supervisor in for event in events { supervisor.handle(event) } } }
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
                try await initialiseWithinDeadline(board)
                failures = 0
                timeoutScale = 1
            } catch {
                if case BoardError.timeout = error { timeoutScale = min(timeoutScale * 2, 8) }
                current.lastError = "\(error)"
                logger.warning("initialisation failed", metadata: ["error": "\(error)"])
                // The first cause names the gap (a silent board that then fails discovery stays "silent").
                setGapReason(pendingGapReason ?? linkDown.map { .disconnected($0) } ?? .initialisationFailed)
                // A board that missed an answer (busy, briefly mute) gets two more tries on this link,
                // which keeps the data it sends meanwhile; then the link is dropped and made again.
                failures += 1
                // A stuck one is not retried on this link: what it waits for may never come.
                if case BoardError.initialisationStuck = error { break recovery }
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
                setGapReason(.silent)
                // Re-initialise on the same link; a board that stays mute fails discovery and we reconnect.
                continue recovery
            case .disconnected(let reason):
                setGapReason(.disconnected(reason))
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
        await releaseSession()
        await claimLink(false)
        // Cancelled because the controller went away (the link went down first, so its reason is
        // kept): the next run, on a new controller, names the gap of the interruption with it.
        if Task.isCancelled, pendingGapReason == nil, let linkDown { pendingGapReason = .disconnected(linkDown) }
        return streamed
    }

    func initialiseAndStart(_ board: MetaWearBoard) async throws {
        let info = try await board.initialise()
        current.model = info.model.rawValue
        current.firmware = info.firmwareRevision
        lastDataArrival = now()
        try await board.startStreaming()
        current.boardTime = await board.gyroAccounter != nil
        if let battery = try? await board.readBattery() { record(battery) }
    }


    func record(_ battery: Settings.BatteryState) {
        current.batteryPercent = Int(battery.chargePercent)
        current.batteryMillivolts = Int(battery.voltageMillivolts)
    }

    func transition(to state: SensorState, _ metadata: Logger.Metadata = [:]) {
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
