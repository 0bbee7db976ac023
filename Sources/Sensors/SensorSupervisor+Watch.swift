import CaptureValues
import BLEHost
import Logging
import MetaWear

extension SensorSupervisor {
    enum WatchOutcome { case cancelled, silent, disconnected(String) }

    /// ``watch(_:)``, letting the loop batch its reads meanwhile when every sample of this
    /// sensor carries the board's time (``ReadPacingPolicy/allowsPacing(_:gyroAccounter:)``).
    ///
    /// Batching starts when the timer below releases the connection's prompt reads
    /// (``ReadPacingPolicy/promptAfterStart(warmUp:commitInterval:)`` into the stream); the
    /// connection holds them again when the watch ends, for whatever it does after.
    func watchPaced(_ board: MetaWearBoard) async -> WatchOutcome {
        guard let plan, ReadPacingPolicy.allowsPacing(plan, gyroAccounter: await board.gyroAccounter != nil) else {
            return await watch(board)
        }
        pacing += 1
        let turn = pacing
        let allowance = ReadPacingPolicy.allowForBoardTimeStream(on: loop)
        let delay = ReadPacingPolicy.promptAfterStart(warmUp: settings.warmUp,
                                                      commitInterval: engine.rules.commitInterval)
        loop.schedule(after: delay, tolerance: 0.1, alarm: loop.makeAlarm()) {
            self.assumeIsolated { supervisor in
                guard supervisor.pacing == turn, !supervisor.pacingStarted else { return }
                supervisor.pacingStarted = true
                supervisor.connectionHold = nil
            }
        }
        let outcome = await watch(board)
        pacing += 1
        if pacingStarted { connectionHold = ReadPacingPolicy.holdForConnection(on: loop) }
        pacingStarted = false
        allowance.release()
        return outcome
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
                // Once a second at most: `assumeIsolated`'s cost does not matter here.
                watchCheck = { self.assumeIsolated { $0.checkWatch() } }
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
    func setGapReason(_ reason: GapReason) {
        pendingGapReason = reason
        for module in trackers.modules { trackers.update(module) { $0.nextGapReason = reason } }
    }

    func linkWentDown(_ reason: String) {
        linkDown = reason
        linkDownAt = now()
        if let watchAlarm { loop.ring(watchAlarm) }
    }
}
