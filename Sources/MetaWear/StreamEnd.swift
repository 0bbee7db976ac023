/// How a board's stream ended before the gateway started a new one: what the stream tracker
/// needs to count the samples lost between the last one received and the new stream.
///
/// A MetaWear notification carries no counter, so the count comes from what the gateway knows of
/// the board at the re-initialisation:
/// - the board kept streaming on the new link (its stale samples arrived): the link is reliable and
///   the reset sequence's barrier read is answered after every sample produced before the stop, so
///   nothing is missing after the last sample received; the outage before it is a step in the
///   samples' arrival times, which the tracker measures;
/// - the board reset (its log clock's `reset_uid` changed): it produced nothing after the reset,
///   whose host time follows from the clock's tick; if the link was up until the reset (the reset
///   dropped it), what the board produced before was delivered;
/// - neither is known: the stream ran at most until the stop command.
public enum StreamEnd: Sendable, Equatable {
    /// Every sample the board produced before the stop was received.
    case delivered
    /// The board reset at this host time (seconds) and produced nothing after it; `linkUp`: the
    /// link stayed up until the reset (the reset dropped it), rather than going down before it.
    case reset(at: Double, linkUp: Bool)
    /// The board was stopped at this host time (seconds), at the latest.
    case stopped(at: Double)
}
