import Capture
import GyroStore
import MetaWear

/// The board's log as a second copy of the gyro stream: what a backfill downloads, where each
/// logged sample lies in time, and when its gaps are known.
extension SensorSupervisor {
    /// Stores what the board's log holds for the gaps of its stream, then removes the downloaded
    /// entries from the board: only after the commit, so a crash in between downloads them again
    /// (and finds their gaps filled), and only once every gap they may fill is known.
    func backfill(from board: MetaWearBoard) async {
        defer { settleResetCount(from: nil, notAfter: now()) }
        guard let plan else { return }
        logTrimmable = false
        await drainFeed()
        // Only samples that can fill a gap are kept from the download: those after the start of the
        // oldest gap known, or after the last sample before this connection (its gap may become
        // known only with the new stream's first samples: after a reset there is no stale one).
        let known = (try? await engine.fillableGaps(device: identity.device, stream: .gyro)) ?? []
        let starts = known.map(\.fromMs) + [lastSampleBeforeConnect].compactMap { $0 }
        let since = (starts.min() ?? .infinity) - 1000
        let resetTimes = self.resetTimes
        // Every entry was logged before its download: each is placed in the last lap of the tick
        // that is not later (a second's margin for the reading's latency).
        let notAfter = now() + 1
        let download: LogDownload
        do {
            guard let downloaded = try await board.downloadLog(keep: { logged in
                guard let reset = resetTimes[logged.resetUID] else { return false }
                return Self.logTime(logged, reset: reset, notAfter: notAfter) * 1000 >= since
            }) else { return }
            download = downloaded
        } catch {
            logger.warning("log download failed; the entries stay on the board for the next connection", metadata: ["error": "\(error)"])
            return
        }
        current.logEntries = Int64(download.entries)
        settleResetCount(from: download, notAfter: notAfter)
        await firstRelease(within: settings.warmUp.seconds + settings.gapConfirmation.seconds + 2)
        await drainFeed()  // the gap of this reconnect is in the engine
        let gaps = ((try? await engine.fillableGaps(device: identity.device, stream: .gyro)) ?? []).map { ($0.fromMs - 1000)...($0.toMs + 1000) }
        var samples: [StoredSample] = []
        samples.reserveCapacity(download.samples.count)
        for logged in download.samples {
            guard let reset = resetTimes[logged.resetUID] else { continue }
            let ms = Self.logTime(logged, reset: reset, notAfter: notAfter) * 1000
            guard gaps.contains(where: { $0.contains(ms) }) else { continue }
            let value = plan.gyro.decoder.scaleFloat(logged.triple)
            samples.append(StoredSample(timestampMs: ms, x: value.x, y: value.y, z: value.z))
        }
        samples.sort { $0.timestampMs < $1.timestampMs }
        do {
            let report = try await engine.backfill(device: identity.device, stream: .gyro, samples: samples)
            current.backfilledSamples += report.filled
            if releasedSinceRestart {
                try await board.removeLogEntries(download.entries)
                current.logEntries = 0
                logTrimmable = true
            } else {
                // The gap of this reconnect becomes known with the new stream's first samples:
                // entries that belong in it must stay on the board until a download can place them.
                logger.warning("the new stream has released no sample yet; the log stays on the board for the next download",
                               metadata: ["entries": "\(download.entries)"])
            }
            logger.notice("backfilled from the board's log", metadata: [
                "entries": "\(download.entries)", "samples": "\(samples.count)", "filled": "\(report.filled)",
                "gapsClosed": "\(report.gapsClosed)", "gapsSkipped": "\(report.gapsSkipped)",
            ])
        } catch {
            current.lastError = "\(error)"
            logger.warning("backfill failed; the log stays on the board for the next connection", metadata: ["error": "\(error)"])
        }
    }

    /// Releases a gyro stream held after a board reset (``StreamTracker/holdForResetCount()``): with
    /// the number of samples the old power cycle logged after the last one received, when the log
    /// holds that one (then it holds what followed, up to the reset); with the estimate otherwise.
    func settleResetCount(from download: LogDownload?, notAfter: Double) {
        guard let pending = pendingResetCount else { return }
        pendingResetCount = nil
        var exact: Int64?
        if let download, let reset = resetTimes[pending.resetUID] {
            exact = Self.loggedAfter(download.samples, resetUID: pending.resetUID, last: pending.lastGyroTime,
                                     reset: reset, notAfter: notAfter)
        }
        let shape = shapes.gyro
        let estimate = trackers[.gyro]?.missingSamples
        trackers.update(.gyro) { $0.settleResetCount(exact) { enqueue(.gyro, shape, $0) } }
        let settled = trackers[.gyro]?.missingSamples
        logger.notice("samples lost to the board reset", metadata: [
            "from": "\(exact == nil ? "the reset time (estimate)" : "the board's log")",
            "correction": "\((settled ?? 0) - (estimate ?? 0))",
        ])
    }

    /// The samples of power cycle `resetUID` in `samples` that the board logged after the one whose
    /// board time (the end of its tick) is `last`; nil when that one is not among them, so the log
    /// cannot vouch for what followed it. A logged sample's time is the middle of its tick, so the
    /// last one received lies half a tick before `last` and the next one at least half a tick after.
    static func loggedAfter(_ samples: [LogReassembler.Sample], resetUID: UInt8, last: Double, reset: Double,
                            notAfter: Double) -> Int64? {
        let tick = Logging.tickMilliseconds / 1000
        var holdsLast = false
        var after: Int64 = 0
        for logged in samples where logged.resetUID == resetUID {
            let time = logTime(logged, reset: reset, notAfter: notAfter)
            if time > last {
                after += 1
            } else if time > last - tick {
                holdsLast = true
            }
        }
        return holdsLast ? after : nil
    }

    /// Returns once the gyro tracker has released samples of the stream started last (then the gap
    /// before them is on its way to the engine), or after `seconds`.
    private func firstRelease(within seconds: Double) async {
        guard !releasedSinceRestart else { return }
        let alarm = loop.makeAlarm()
        await withCheckedContinuation { continuation in
            releaseWaiter = continuation
            loop.schedule(after: seconds, tolerance: 0.1, alarm: alarm) {
                self.assumeIsolated { $0.endReleaseWait() }
            }
        }
        loop.cancel(alarm)
    }

    func endReleaseWait() {
        releaseWaiter?.resume()
        releaseWaiter = nil
    }

    /// A logged sample's host time (s): its power cycle's reference plus its tick, half a tick
    /// later on average since a tick counts whole ticks, in the lap of the u32 tick that puts it
    /// last but not after `notAfter`.
    ///
    /// `reset` is tick 0 of the lap in which the reference was read (``BoardClock``); entries
    /// logged after a wrap have small ticks again, entries from before it large ones. Reading a
    /// decreasing tick within one `reset_uid` as a wrap (as MbientLab's Android SDK does) gives
    /// the same laps for entries less than a lap (72.8 days) old, without state across entries,
    /// and holds for a power cycle that wrapped after its reference was read and then reset.
    static func logTime(_ logged: LogReassembler.Sample, reset: Double, notAfter: Double) -> Double {
        let time = reset + (Double(logged.tick) + 0.5) * Logging.tickMilliseconds / 1000
        return time + ((notAfter - time) / Logging.tickLapSeconds).rounded(.down) * Logging.tickLapSeconds
    }
}
