import BLEHost
import MetaWear
import PosixThreads

/// A finished log download: the samples put back together, and how many entries it covered (the
/// count to remove from the board once they are stored).
public struct LogDownload: Sendable {
    public var samples: [LogReassembler.Sample]
    public var entries: UInt32
    /// Entries that belonged to no gyro logger, or lost their partner slice.
    public var ignored: Int
}

/// A download in progress, fed from the board's notifications on the loop.
struct LogDownloadState {
    var reassembler: LogReassembler
    var samples: [LogReassembler.Sample] = []
    /// The samples of the notification at hand, before `keep` decides.
    var paired: [LogReassembler.Sample] = []
    var left: UInt32
    var lastActivity: Double
    var waiter: CheckedContinuation<Void, any Error>?
    /// The loop's timer that checks for a stall (see `watchForStall`).
    var stallAlarm: ThreadExecutor.Alarm?
    var done = false
    let keep: @Sendable (LogReassembler.Sample) -> Bool

    mutating func finish() {
        done = true
        waiter?.resume()
        waiter = nil
    }

    mutating func fail(_ error: any Error) {
        waiter?.resume(throwing: error)
        waiter = nil
    }
}

/// The board's log as a second copy of the gyro stream (``BoardOptions/backfill``).
///
/// Two loggers record the gyro data signal (x/y and z slices, section 9.2), created at every
/// start of streaming. The reset sequence of an initialisation removes the loggers but not their
/// entries (flash keeps them until `0b 09`), so once streaming has started again, with the gap of
/// the interruption recorded, every entry is downloaded (section 9.4: each page confirmed on
/// revision 2 boards; on revision 3 the RAM page flushed first, with logging stopped for it). The supervisor stores what falls into gaps and only then removes the
/// downloaded entries from the board (``removeLogEntries(_:)``): a download cut short, or a gateway
/// killed before its commit, leaves them for the next one.
extension MetaWearBoard {
    /// Downloads every entry of the log, keeping the samples `keep` wants (those that can fill a
    /// gap: a log of hours is mostly what was streamed anyway); `nil` when the board does not log
    /// for this gateway.
    public func downloadLog(keep: @escaping @Sendable (LogReassembler.Sample) -> Bool) async throws -> LogDownload? {
        guard let backfill = options.backfill, info.isPresent(.logging), let (first, second) = loggers else { return nil }
        let revision = info.modules[.logging]?.revision ?? 0
        for command in Logging.enableReadoutNotifications(moduleRevision: revision) { try await link.write(command) }
        let buffered = Logging.hasPageBuffer(moduleRevision: revision)
        if buffered {
            // Stop, flush the RAM page to the NAND, count, log on: the readout reads the counted
            // entries only, so the entries logged from here on wait for the next download, and
            // only the samples due during these three writes are not logged (streamed live).
            try await link.write(Logging.stop())
            try await link.write(Logging.flushPage())
        }
        let answer = try await request(Logging.readLength(), answer: MetaWearModuleID.logging.rawValue, 0x85, what: "log length read")
        if buffered { try await link.write(Logging.resume()) }
        guard case .logLength(let count) = try? parser.parse(answer), count > 0 else {
            return LogDownload(samples: [], entries: 0, ignored: 0)
        }
        download = LogDownloadState(reassembler: LogReassembler(firstID: first, secondID: second), left: count, lastActivity: now(),
                                    keep: keep)
        defer { download = nil }
        try await link.write(Logging.readout(count: count, progressEvery: max(1, count / 20)))
        try await waitForDownload(stallTimeout: backfill.stallTimeout)
        let state = download!
        logger.info("log downloaded", metadata: ["subsystem": "sensor", "entries": "\(count)", "samples": "\(state.samples.count)",
                                                 "ignored": "\(state.reassembler.ignoredEntries + state.reassembler.unpaired)"])
        return LogDownload(samples: state.samples, entries: count, ignored: state.reassembler.ignoredEntries + state.reassembler.unpaired)
    }

    /// Waits for the progress notification that says no entry is left; fails after `stallTimeout`
    /// without any readout notification.
    private func waitForDownload(stallTimeout: Duration) async throws {
        watchForStall(stallTimeout)
        defer { if let alarm = download?.stallAlarm { loop.cancel(alarm) } }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            if closed { return continuation.resume(throwing: BoardError.linkClosed) }
            if download?.done == true { return continuation.resume() }
            download?.waiter = continuation
        }
    }

    /// Fails the download once no readout notification has come for `stallTimeout`. A timer of
    /// the loop, set for when the download would first have stalled, which sets itself again
    /// while entries arrive; not a task that polls with `Task.sleep` (each sleep's end wakes two
    /// dispatch threads and hops back to the loop).
    private func watchForStall(_ stallTimeout: Duration) {
        guard let idle = downloadIdle() else { return }
        let left = stallTimeout.seconds - idle
        guard left > 0 else { return failDownload(BoardError.timeout("log readout (no progress for \(stallTimeout))")) }
        let alarm = loop.makeAlarm()
        download?.stallAlarm = alarm
        // Strong: cancelled once the download ends (see `request` for why not weak).
        loop.schedule(after: left, tolerance: left / 16, alarm: alarm) { [board = self] in
            board.assumeIsolated { board in
                guard board.download?.stallAlarm == alarm else { return }
                board.watchForStall(stallTimeout)
            }
        }
    }

    private func downloadIdle() -> Double? { download.map { now() - $0.lastActivity } }
    private func failDownload(_ error: any Error) { download?.fail(error) }

    /// One logging notification during a download; `false` when it is not part of the readout.
    func readout(_ bytes: ArraySlice<UInt8>) -> Bool {
        let register = bytes[bytes.startIndex + 1]
        switch register {
        case Logging.ReadoutRegister.readoutNotify:
            guard let entries = Logging.Entry.parse(bytes), var state = download else { return true }
            // Taken out while it grows: two inout accesses to `download` would overlap, and a
            // copy left behind would copy the samples on every notification.
            download = nil
            state.lastActivity = now()
            state.reassembler.take(entries, into: &state.paired)
            for sample in state.paired where state.keep(sample) { state.samples.append(sample) }
            state.paired.removeAll(keepingCapacity: true)
            download = state
        case Logging.ReadoutRegister.readoutProgress:
            guard bytes.count == 6 else { return true }
            let start = bytes.startIndex + 2
            let left = UInt32(bytes[start]) | UInt32(bytes[start + 1]) << 8 | UInt32(bytes[start + 2]) << 16 | UInt32(bytes[start + 3]) << 24
            download!.left = left
            download!.lastActivity = now()
            if left == 0 { download!.finish() }
        case Logging.Register.readoutPageCompleted:
            download!.lastActivity = now()
            let link = self.link
            Task { try? await link.write(Logging.confirmPage()) }
        default:
            return false
        }
        return true
    }

    /// Creates the gyro loggers (each id awaited, as the SDK does) and starts logging.
    func startLogging(_ plan: StreamingPlan, _ backfill: BoardOptions.Backfill) async throws {
        var ids: [UInt8] = []
        for trigger in gyroTriggers(plan) {
            let answer = try await request(Logging.createLogger(trigger), answer: MetaWearModuleID.logging.rawValue, Logging.Register.trigger,
                                           what: "logger creation \(trigger)")
            guard case .loggerCreated(let id) = try? parser.parse(answer) else { throw BoardError.timeout("logger creation \(trigger)") }
            ids.append(id)
        }
        loggers = (ids[0], ids[1])
        for command in Logging.start(overwrite: backfill.overwrite) { try await link.write(command) }
    }

    /// Removes all but the newest `keep` entries (`0b 85`, then `0b 09`): while streaming, the log
    /// older than the last backfill holds only samples the stream delivered, and a download at the
    /// next reconnect should not have to read hours of them.
    public func trimLog(keeping keep: UInt32) async throws {
        guard options.backfill != nil, info.isPresent(.logging), loggers != nil else { return }
        let answer = try await request(Logging.readLength(), answer: MetaWearModuleID.logging.rawValue, 0x85, what: "log length read")
        guard case .logLength(let count) = try? parser.parse(answer), count > keep else { return }
        try await removeLogEntries(count - keep)
    }

    /// Removes the `count` oldest entries: the downloaded ones, after they were stored.
    public func removeLogEntries(_ count: UInt32) async throws {
        guard count > 0 else { return }
        let revision = info.modules[.logging]?.revision ?? 0
        for command in Logging.removeEntries(count: count, moduleRevision: revision) { try await link.write(command) }
    }

    private func gyroTriggers(_ plan: StreamingPlan) -> [Logging.Trigger] {
        guard let register = info.gyroRegisters?.data else { return [] }
        return Logging.Trigger.threeAxis(module: .gyro, dataRegister: register)
    }
}
