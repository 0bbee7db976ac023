import Capture
import GyroStore

/// What the sensors hand their data to and ask of the capture side: the feed the data plane
/// leaves samples in, the continuation of a session an earlier run left open, the gaps a backfill
/// may fill, and the board reset times that place logged samples in time. The capture engine is
/// the one implementation; supervisors see only this, never the store behind it. Every time that
/// crosses it is on the gateway's timeline (`GatewayClock.timeline()`): the engine dates them.
public protocol CaptureSink: Sendable {
    /// Where samples and button-driven session changes go, in order, from the data plane.
    var feed: CaptureFeed { get }
    var rules: CaptureRules { get }
    /// Returns once everything left in ``feed`` so far has been taken in.
    func ingestFeed() async
    func continuation(device: String, stream: SensorStream) async -> (nextIndex: Int64, lastMs: Double)?
    func fillableGaps(device: String, stream: SensorStream, days: Double) async throws -> [GapRange]
    func backfill(device: String, stream: SensorStream, samples: [StoredSample]) async throws -> BackfillReport
    func boardResetTimes(device: String) async throws -> [UInt8: Double]
    func saveBoardResetTime(device: String, resetUID: UInt8, resetTime: Double) async throws
    /// A reading of the board's log clock: where its power cycle began, by this reading alone.
    func boardClockRead(device: String, resetUID: UInt8, measuredResetTime: Double) async throws
    /// Closes the sensor's open session, if any, for `reason`: another gateway of a fleet now
    /// captures the board, and its samples go into a session there.
    func closeSession(device: String, reason: String) async
    /// Releases the device's open session for the gateway that connects to the board next
    /// (`CaptureEngine.releaseSession(device:gateway:boardCycle:carryingGapChunks:)`), with the
    /// board's power cycle as this gateway placed it (timeline) and, for a gateway that
    /// backfills, the chunks listing gaps its log may still fill; nil when none is open.
    func handOffSession(device: String, gateway: String, boardCycle: SessionHandoff.BoardCycle?,
                        carryingGapChunks: Bool) async throws -> SessionHandoff?
    /// Where the hand-off's board power cycle began on this gateway's timeline (s).
    func timelineBoardCycle(of handoff: SessionHandoff) async -> SessionHandoff.BoardCycle?
    /// Takes a released session: continues it, or closes it at its last sample when it waited
    /// longer than a session may stay idle. Returns whether it continues.
    func continueSession(_ handoff: SessionHandoff) async throws -> Bool
}

extension CaptureEngine: CaptureSink {
    public func closeSession(device: String, reason: String) async {
        _ = try? await stopSession(device: device, reason: reason)
    }

    public func handOffSession(device: String, gateway: String, boardCycle: SessionHandoff.BoardCycle?,
                               carryingGapChunks: Bool) async throws -> SessionHandoff? {
        try await releaseSession(device: device, gateway: gateway, boardCycle: boardCycle, carryingGapChunks: carryingGapChunks)
    }

    public func continueSession(_ handoff: SessionHandoff) async throws -> Bool {
        if handoffExpired(handoff) {
            try await closeHandedOver(handoff)
            return false
        }
        try await adoptSession(handoff)
        return true
    }
}

extension CaptureSink {
    /// The gaps of `stream` a backfill may fill, from the last seven days (the engine's own default).
    func fillableGaps(device: String, stream: SensorStream) async throws -> [GapRange] {
        try await fillableGaps(device: device, stream: stream, days: 7)
    }
}
