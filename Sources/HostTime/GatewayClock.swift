import CClock
import Logging
import PosixThreads
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The gateway's one time source: a continuous timeline for the data plane, and the true-time
/// estimate (``now()``) that sessions, gaps, documents and retention are dated with, which
/// follows the wall clock's steps without a restart and knows whether it is synchronised.
///
/// The timeline is CLOCK_MONOTONIC anchored once to the wall clock: it never jumps, so sample
/// clocks, gap detection and timeouts on it are never disturbed by a step. The estimate is the
/// timeline plus a correction that ``ClockDating`` keeps from what the kernel says (a watcher
/// thread wakes when CLOCK_REALTIME is set, through a timerfd armed with
/// `TFD_TIMER_CANCEL_ON_SET`, and reads adjtimex's synchronisation state once a second) and from
/// the boards' clocks. Each change that re-dates what came before is yielded on ``redatings``,
/// for the capture engine to move this run's sessions by it. Reading either time costs a
/// clock read and no lock on the timeline; nothing is done per sample.
public final class GatewayClock: Sendable {
    /// What the clock is made of: the kernel's clocks, or a test's.
    public struct Kernel: Sendable {
        public var wall: @Sendable () -> Double
        public var monotonic: @Sendable () -> Double
        /// Whether an NTP client keeps the clock synchronised, and the kernel's error bound (s).
        public var synchronised: @Sendable () -> (synchronised: Bool, maxError: Double?)

        public init(wall: @escaping @Sendable () -> Double, monotonic: @escaping @Sendable () -> Double,
                    synchronised: @escaping @Sendable () -> (synchronised: Bool, maxError: Double?)) {
            self.wall = wall
            self.monotonic = monotonic
            self.synchronised = synchronised
        }

        public static let system = Kernel(wall: { read(CLOCK_REALTIME) }, monotonic: { read(CLOCK_MONOTONIC) }, synchronised: {
            var maxError = 0
            let state = cclock_kernel_synchronised(&maxError)
            return state < 0 ? (false, nil) : (state == 1, Double(maxError) / 1e6)
        })

        static func read(_ clock: clockid_t) -> Double {
            var spec = timespec()
            clock_gettime(clock, &spec)
            return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
        }
    }

    struct State {
        var dating: ClockDating
        var maxError: Double?
        /// The wall clock's offset from the timeline at the last observation.
        var wallOffset = 0.0
        var steps = 0
        var redatings = 0
        var last: (redating: Redating, atTimeline: Double)?
        var stepDetection = "not started"
        var watching = false
    }

    private let kernel: Kernel
    private let logger: Logger
    /// The timeline's anchor: wall time at start, less the monotonic clock then.
    private let anchor: Double
    private let state: LockedState<State>
    private let redatingsContinuation: AsyncStream<Redating>.Continuation
    /// Every re-dating, in order, for one consumer (the daemon hands them to the capture engine).
    public let redatings: AsyncStream<Redating>

    /// The process's clock: every part of the gateway reads this one (tests make their own).
    public static let process = GatewayClock()

    public init(kernel: Kernel = .system, logger: Logger = Logger(label: "gyrogate.clock")) {
        self.kernel = kernel
        self.logger = logger
        let wall = kernel.wall()
        anchor = wall - kernel.monotonic()
        let (synchronised, maxError) = kernel.synchronised()
        var initial = State(dating: ClockDating(wallOffset: 0, synchronised: synchronised))
        initial.maxError = maxError
        state = LockedState(initial)
        (redatings, redatingsContinuation) = AsyncStream.makeStream(of: Redating.self, bufferingPolicy: .unbounded)
    }

    /// Seconds on the continuous timeline (epoch-like: the wall clock at start, then monotonic).
    @inline(__always)
    public func timeline() -> Double { anchor + kernel.monotonic() }

    /// The true-time estimate, epoch seconds.
    public func now() -> Double { timeline() + correction }

    /// True time minus the timeline, seconds.
    public var correction: Double { state.withLock { $0.dating.correction } }

    public var dating: Dating { state.withLock { $0.dating.dating } }

    /// What the status, the metrics and the doctor show.
    public var snapshot: ClockSnapshot {
        state.withLock { state in
            ClockSnapshot(dating: state.dating.dating, kernelSynchronised: state.dating.kernelSynchronised,
                          correction: state.dating.correction, maxError: state.maxError, boardSource: state.dating.boardSource,
                          steps: state.steps, redatings: state.redatings, lastRedating: state.last?.redating,
                          lastRedatingAt: state.last.map { $0.atTimeline + state.dating.correction }, stepDetection: state.stepDetection)
        }
    }

    /// Looks at the kernel's clock now: what the watcher does on every wake-up.
    public func observe() {
        let offset = kernel.wall() - timeline()
        let (synchronised, maxError) = kernel.synchronised()
        let redating: Redating? = state.withLock { state in
            state.maxError = maxError
            if abs(offset - state.wallOffset) >= ClockDating.stepThreshold { state.steps += 1 }
            state.wallOffset = offset
            return state.dating.observe(wallOffset: offset, synchronised: synchronised)
        }
        if let redating { publish(redating) }
    }

    /// A board's clock dates the gateway (see ``ClockDating/board(correction:source:)``); taken
    /// only while the wall clock has not been synchronised in this run.
    public func boardSays(correction: Double, source: String) {
        let redating = state.withLock { $0.dating.board(correction: correction, source: source) }
        if let redating { publish(redating) }
    }

    private func publish(_ redating: Redating) {
        let at = timeline()
        state.withLock { state in
            state.redatings += 1
            state.last = (redating, at)
        }
        logger.notice("the gateway's time is re-dated", metadata: [
            "subsystem": "clock", "reason": "\(redating.reason)", "deltaSeconds": "\(redating.delta)", "dating": "\(redating.dating.rawValue)",
        ])
        redatingsContinuation.yield(redating)
    }

    /// Starts the watcher thread: it wakes when the clock is set and once a second.
    public func startWatching() {
        let fd = cclock_step_timer()
        let detection = fd >= 0 ? "timerfd" : "polling once a second (timerfd: \(String(cString: strerror(errno))))"
        let first = state.withLock { state -> Bool in
            defer { state.watching = true }
            state.stepDetection = detection
            return !state.watching
        }
        guard first else {
            if fd >= 0 { close(fd) }
            return
        }
        let started = DetachedThread.start(name: "gyrogate-clock") { [self] in watch(fd) }
        if !started { logger.error("no thread for the clock's watcher: steps are not followed", metadata: ["subsystem": "clock"]) }
    }

    /// Stops the watcher within a second.
    public func stopWatching() {
        state.withLock { $0.watching = false }
        redatingsContinuation.finish()
    }

    private func watch(_ fd: Int32) {
        defer { if fd >= 0 { close(fd) } }
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while state.withLock({ $0.watching }) {
            if fd >= 0 {
                entry.revents = 0
                if poll(&entry, 1, 1000) > 0, cclock_read_step_timer(fd) == 1 { _ = cclock_arm_step_timer(fd) }
            } else {
                usleep(1_000_000)
            }
            observe()
        }
    }
}

/// The clock's state as the operator sees it.
public struct ClockSnapshot: Sendable, Equatable {
    public var dating: Dating
    public var kernelSynchronised: Bool
    /// True time minus the timeline (s).
    public var correction: Double
    /// The kernel's bound on the wall clock's error (s), when adjtimex answered.
    public var maxError: Double?
    public var boardSource: String?
    /// Steps of the wall clock seen in this run.
    public var steps: Int
    public var redatings: Int
    public var lastRedating: Redating?
    /// When the last re-dating happened (epoch s, true-time estimate).
    public var lastRedatingAt: Double?
    /// How steps are noticed: "timerfd", or polling and why.
    public var stepDetection: String
}
