import CaptureValues
import BLEHost
import Capture
import GyroStore
import Logging
import MetaWear

extension SensorSupervisor {
    // MARK: - Events

    func handle(_ event: BoardEvent) {
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
            if pushed != nil {
                lastDataArrival = arrival
                if module == .gyro { lastGyroTime = arrival }
            }
        case .button(let state):
            guard state.isPressed else { return }
            logger.info("button pressed")
            if settings.buttonControlsSession {
                feed.toggleSession(identity, atMs: now() * 1000)
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
        let previous = boardClock
        let reset = previous.map { $0.resetUID != clock.resetUID } ?? false
        boardClock = clock
        let saves = settings.board.backfill != nil && abs((resetTimes[clock.resetUID] ?? -1) - clock.resetTime) > 0.5
        // In order: a board that dates the gateway does so before its reset time is saved.
        Task { [engine, address] in
            try? await engine.boardClockRead(device: address, resetUID: clock.resetUID, measuredResetTime: clock.measuredResetTime)
            if saves { try? await engine.saveBoardResetTime(device: address, resetUID: clock.resetUID, resetTime: clock.resetTime) }
        }
        resetTimes[clock.resetUID] = clock.resetTime
        guard reset else { return }
        logger.notice("the board reset since the last connection", metadata: ["resetUID": "\(clock.resetUID)"])
        // A reset drops the link at once: a link that went down clearly before it went out of reach.
        let linkUp = (linkDownAt ?? .infinity) >= clock.resetTime - 0.02
        flushTrackers()
        let counted = trackers[.gyro]?.lastStamp != nil
        for module in trackers.modules {
            trackers.update(module) { $0.restart(end: .reset(at: clock.resetTime, linkUp: linkUp), reason: .boardReset) }
        }
        // The count above comes from the reset time, read with the clock's latency. A board whose log
        // keeps every entry up to the reset says it exactly: the gyro stream waits for the download.
        if settings.board.backfill != nil, clock.logKeepsEntriesAcrossReset, plan?.gyro.boardTime == true,
           counted, let previous, let last = lastGyroTime {
            trackers.update(.gyro) { $0.holdForResetCount() }
            pendingResetCount = (previous.resetUID, last)
        }
        lastGyroTime = nil
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
                tracker.restart(end: end, reason: pendingGapReason ?? .reinitialised)
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
        let reason = continuationReason
        if continuation == nil, accelerometerContinuation == nil { continuationReason = .gatewayRestarted }
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

    func enqueue(_ module: MetaWearModuleID, _ stream: FeedShape?, _ batch: StreamTracker.Batch) {
        guard let stream, let first = batch.samples.first, let last = batch.samples.last else { return }
        let samples = batch.samples
        // The commit deadline counts from when the first sample arrived (its stamp is at most
        // that), not from when the tracker let it go.
        feed.append(module == .gyro ? lanes.gyro : lanes.accelerometer, odrHz: stream.odrHz, range: stream.range,
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

    func flushTrackers() {
        for module in trackers.modules {
            let stream = module == .gyro ? shapes.gyro : shapes.accelerometer
            trackers.update(module) { $0.flush { enqueue(module, stream, $0) } }
        }
    }

}

/// A planned stream as the capture feed records it.
struct FeedShape {
    var odrHz: Double
    var range: Double

    init(_ stream: StreamingPlan.Stream) {
        odrHz = stream.odrHz
        range = stream.range
    }
}
