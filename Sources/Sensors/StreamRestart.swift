import MetaWear

/// The board's log clock as read at an initialisation: which power cycle it is in, and when
/// (host seconds) that cycle began.
public struct BoardClock: Sendable, Equatable {
    public var resetUID: UInt8
    public var resetTime: Double
    /// Whether every entry the board logged before a reset is in its log after it: false where the
    /// newest entries wait in a RAM page that a reset loses (logging revision 3, MetaMotion S).
    public var logKeepsEntriesAcrossReset: Bool
    /// Where this reading alone puts the cycle's start (`resetTime` may be the one an earlier
    /// reading placed, kept so that the cycle's times share one frame).
    public var measuredResetTime: Double

    public init(resetUID: UInt8, resetTime: Double, logKeepsEntriesAcrossReset: Bool = true, measuredResetTime: Double? = nil) {
        self.resetUID = resetUID
        self.resetTime = resetTime
        self.logKeepsEntriesAcrossReset = logKeepsEntriesAcrossReset
        self.measuredResetTime = measuredResetTime ?? resetTime
    }
}

/// What a (re)initialisation learnt about the board's old streams.
public struct StreamRestart: Sendable, Equatable {
    /// Host time (s) at which the reset sequence stopped the board's streams.
    public var stopTime: Double
    /// Whether the board's old gyro stream was still running on this link (its samples arrived).
    public var staleDelivered: Bool

    public init(stopTime: Double, staleDelivered: Bool) {
        self.stopTime = stopTime
        self.staleDelivered = staleDelivered
    }

    /// How the old stream ended (a reset is told apart earlier, by ``BoardEvent/clock(_:)``).
    public var end: StreamEnd { staleDelivered ? .delivered : .stopped(at: stopTime) }
}
