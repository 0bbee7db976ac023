/// How the gateway's times are dated: what its true-time estimate rests on.
public enum Dating: String, Sendable, Equatable, Codable, CaseIterable {
    /// The wall clock, while an NTP client (timesyncd, chrony) keeps it synchronised, or after it
    /// did in this run.
    case synchronised
    /// A board's own clock: a power cycle whose start the gateway learned while synchronised,
    /// with the wall clock not synchronised since this run began.
    case board
    /// The wall clock as it is, never synchronised in this run: after a power cut a Pi without a
    /// real-time clock runs from what fake-hwclock last saved, or from 1970.
    case unsynchronised
}

/// A change of the true-time estimate: every time the gateway dated before it, in this run,
/// is `delta` seconds off and moves by it.
public struct Redating: Sendable, Equatable {
    /// Seconds to add to every time dated before (0 when only the dating changes).
    public var delta: Double
    /// How times are dated from now on.
    public var dating: Dating
    /// Why, for the logs and the status.
    public var reason: String

    public init(delta: Double, dating: Dating, reason: String) {
        self.delta = delta
        self.dating = dating
        self.reason = reason
    }
}

/// The rules that turn observations of the kernel's clock (and the boards' clocks) into the
/// gateway's true-time estimate: a pure state machine, tested without a clock to step.
///
/// The estimate is `timeline + correction`, where the timeline is CLOCK_MONOTONIC anchored once
/// (continuous: the data plane stamps on it) and `correction` is what the clock currently says
/// the timeline is off by. The kernel keeps the wall clock's offset from the monotonic clock
/// constant while an NTP client slews it, and changes it only when the clock is set (a step), so
/// the offset is what to observe:
///
/// - A step of at least ``stepThreshold`` is followed and re-dates: the clock just said that
///   everything dated before was off by the step. A wrong step (a bad server, a mistyped `date`)
///   is followed too: the clock is the authority, and a later correction re-dates again.
/// - A smaller step is followed for new times only: earlier ones stay within the threshold.
/// - The first synchronisation re-dates even without a step, so that documents stop saying
///   `unsynchronised`.
/// - While not synchronised, a board in a known power cycle is a better source than the wall
///   clock: its time is taken (``board(correction:source:)``) and unsynchronised steps are then
///   ignored until the clock is synchronised.
/// - Once synchronised, a later loss of the kernel's flag without a step (its error bound grew
///   past 16 s after hours without an NTP server) keeps the dating: the clock was set and runs
///   on the kernel's disciplined frequency.
public struct ClockDating: Sendable, Equatable {
    /// Steps of at least this many seconds re-date what was dated before. Half of the 20 ms
    /// within which samples are dated, so what a smaller step leaves stays well inside it;
    /// NTP clients step only far larger offsets (timesyncd 0.4 s, chrony's makestep 1 s) and
    /// slew the rest, so every real step re-dates.
    public static let stepThreshold = 0.010

    public private(set) var dating: Dating
    /// True time minus the timeline, in seconds.
    public private(set) var correction: Double
    /// What the kernel said last.
    public private(set) var kernelSynchronised: Bool
    /// The board whose clock dates the gateway, in the `board` dating.
    public private(set) var boardSource: String?

    /// The state at start: the wall clock's offset from the timeline and the kernel's flag.
    public init(wallOffset: Double, synchronised: Bool) {
        dating = synchronised ? .synchronised : .unsynchronised
        correction = wallOffset
        kernelSynchronised = synchronised
    }

    /// The kernel's clock, observed: its offset from the timeline (wall − timeline, seconds)
    /// and whether it is synchronised. Returns the re-dating it implies, if any.
    public mutating func observe(wallOffset: Double, synchronised: Bool) -> Redating? {
        kernelSynchronised = synchronised
        let delta = wallOffset - correction
        let stepped = abs(delta) >= Self.stepThreshold
        if synchronised {
            if dating != .synchronised {
                let from = dating
                follow(wallOffset, .synchronised)
                return Redating(delta: delta, dating: .synchronised, reason: from == .board ? "clock synchronised (was board time)" : "clock synchronised")
            }
            correction = wallOffset
            return stepped ? Redating(delta: delta, dating: .synchronised, reason: "clock stepped") : nil
        }
        switch dating {
        case .board:
            return nil
        case .synchronised where !stepped:
            correction = wallOffset
            return nil
        case .synchronised, .unsynchronised:
            follow(wallOffset, .unsynchronised)
            return stepped ? Redating(delta: delta, dating: .unsynchronised, reason: "clock set while not synchronised") : nil
        }
    }

    /// A board's clock says the timeline is `correction` seconds off (its power cycle's start
    /// learned while synchronised, plus its tick): taken while the wall clock has not been
    /// synchronised in this run.
    public mutating func board(correction boardCorrection: Double, source: String) -> Redating? {
        guard dating == .unsynchronised else { return nil }
        let delta = boardCorrection - correction
        correction = boardCorrection
        dating = .board
        boardSource = source
        return Redating(delta: delta, dating: .board, reason: "dated by the clock of board \(source)")
    }

    private mutating func follow(_ wallOffset: Double, _ newDating: Dating) {
        correction = wallOffset
        dating = newDating
        boardSource = nil
    }
}
