import GyroStore
import HostTime

extension CaptureEngine {
    /// How far from a board's anchor its clock still dates the gateway: the u32 tick wraps after
    /// 72.8 days, and a power cycle that old is better taken for a new one.
    static let boardAnchorLifetime = 60.0 * 86_400

    /// When each power cycle (`reset_uid`) of `device` began, as last saved, on the timeline
    /// (s): what places log entries of a power cycle this process never saw.
    public func boardResetTimes(device: String) async throws -> [UInt8: Double] {
        let correction = correctionMs / 1000
        return try await store.boardResetTimes(device: device).mapValues { $0 - correction }
    }

    /// Saves when a power cycle of `device` began (timeline, s), for later runs of the gateway.
    public func saveBoardResetTime(device: String, resetUID: UInt8, resetTime: Double) async throws {
        let time = resetTime + correctionMs / 1000
        runResetTimes[device, default: [:]][resetUID] = time
        try await store.saveBoardResetTime(device: device, resetUID: resetUID, resetTime: time)
    }

    /// A reading of a board's log clock: where its power cycle `resetUID` began on the timeline
    /// (s), as this reading alone measured it (its tick back from the answer).
    ///
    /// While the gateway's clock is synchronised, the start is kept in true time as the cycle's
    /// anchor. While it has not been synchronised in this run, a cycle anchored earlier dates the
    /// gateway (`GatewayClock.boardSays(correction:source:)`): the board's crystal kept
    /// counting while the gateway was down, so anchor + tick is the true time, off by the
    /// crystal's drift over the time since the anchor (docs/architecture.md, "Time"). A cycle that
    /// reuses the 3-bit `reset_uid` is told from the anchored one by its tick, which would date
    /// the board before its last stored sample.
    public func boardClockRead(device: String, resetUID: UInt8, measuredResetTime: Double) async throws {
        switch dating {
        case .synchronised:
            let anchor = GyroStore.BoardClockAnchor(resetTime: measuredResetTime + correctionMs / 1000, measuredAt: now() / 1000)
            try await store.saveBoardClockAnchor(device: device, resetUID: resetUID, anchor)
        case .unsynchronised:
            guard let clock, let anchor = try await store.boardClockAnchor(device: device, resetUID: resetUID) else { return }
            let correction = anchor.resetTime - measuredResetTime
            let nowTrue = timelineMs() / 1000 + correction
            let lastSample = (try await store.lastSampleMs(device: device)).map { $0 / 1000 } ?? -.infinity
            guard nowTrue >= lastSample - 1, nowTrue - anchor.measuredAt <= Self.boardAnchorLifetime else {
                logger.info("the board's power cycle is not the anchored one", metadata: [
                    "subsystem": "capture", "device": "\(device)", "resetUID": "\(resetUID)",
                    "boardDatesMs": "\(nowTrue * 1000)", "lastSampleMs": "\(lastSample * 1000)",
                ])
                return
            }
            clock.boardSays(correction: correction, source: device)
        case .board:
            return
        }
    }
}
