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
