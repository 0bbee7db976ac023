// SampleClock: host timestamps for streamed samples.
//
// Problem. Streamed gyro/acc notifications carry no board time (protocol reference, section 10): the
// SDK stamps each notification with the host time it was processed, and gives all 3 samples of a
// packed notification the same time. Arrival times jitter (connection events every 7.5–50 ms,
// scheduling), and the sensor's oscillator differs from its nominal ODR by up to about 1 %.
//
// Model. Sample i is generated at g(i) = g0 + i·P, where P is the sensor's true period. A
// notification carrying samples first…last arrives at a(last) = g(last) + L + J, where L is the
// smallest transport latency and J ≥ 0 is jitter. So the points (last, a) lie on or above the line
// g + L, and the lowest ones (the lower envelope) lie on it.
//
// Method. The clock keeps a line T(i) = refTime + (i − refIndex)·p and stamps sample i with T(i):
//
// 1. Anchor: the first notification anchors the line at its arrival (its last sample = arrival).
// 2. Envelope rule: a sample may never be stamped after it arrived. If a notification arrives
//    before T(last), the line moves down at once to pass through that arrival. Moving up is slow:
//    at the end of each window (about 1 s of samples) the line rises by half of the smallest gap
//    seen over the last three windows, if positive, so it converges onto the lower envelope
//    without following jitter, and a link stall (one or two windows of late arrivals) does not
//    lift it.
// 3. Rate: each window contributes its lowest point (smallest arrival − index·nominal). The lower
//    convex hull of the last 32 window minima (about 32 s) gives the true period: its edge spanning
//    the mean index is the line under all minima closest to them on average (Moon et al. 1999).
//    Minima sit on the envelope, so jitter barely moves them, and a window raised by a link stall
//    lies above the hull and is ignored. The effective period p moves toward that estimate by
//    at most 0.2 % of nominal per window (slow) and stays within ±2 % of nominal (bounded). When p
//    changes, the line pivots at the next sample index, so stamps never jump.
// 4. Spacing: the samples of one notification are stamped T(first), T(first)+p, …: distinct and
//    evenly spaced. Across notifications stamps are strictly increasing: if the envelope rule moves
//    the line down below the previous stamp, the first new sample gets previous + p/2 instead.
//
// The result tracks g(i) + L: correct spacing, and an offset equal to the smallest latency seen,
// which the host cannot observe. Samples lost on the board (not by BLE, which is reliable within a
// connection) shift every later index; the capture layer detects such gaps and should reset() the
// clock, since no clock can tell a lost sample from a slow sensor within one notification. Arrival times are any monotonic host clock in seconds (e.g.
// ContinuousClock or CLOCK_MONOTONIC converted by the caller); stamps come out in the same base.
// The clock also numbers samples: index 0 is the first sample after ``SampleClock/reset()``.

/// Timestamps streamed samples from notification arrival times: anchored to the host clock at the
/// first notification, spaced at the nominal period corrected for sensor drift. See the method
/// comment at the top of `SampleClock.swift`.
public struct SampleClock: Sendable {
    /// Tuning. The defaults suit 25–3200 Hz IMU streams.
    public struct Configuration: Hashable, Sendable {
        /// Nominal output data rate in Hz.
        public var nominalRate: Double
        /// Length of an envelope window, in seconds' worth of samples at the nominal rate.
        public var windowDuration: Double = 1.0
        /// Window minima kept for the rate fit (32 windows ≈ 32 s).
        public var fitWindowCount: Int = 32
        /// Window minima needed before the period is adjusted.
        public var minimumFitWindows: Int = 4
        /// Bound on |effective period / nominal − 1|.
        public var maximumRateError: Double = 0.02
        /// Bound on the change of the effective period per window, relative to nominal.
        public var maximumPeriodStep: Double = 0.002
        /// Fraction of a window's smallest positive gap by which the line rises.
        public var riseGain: Double = 0.5

        public init(nominalRate: Double) {
            precondition(nominalRate > 0 && nominalRate.isFinite, "nominal rate must be positive")
            self.nominalRate = nominalRate
        }
    }

    /// Stamps for the samples of one notification.
    public struct Timing: Hashable, Sendable {
        /// Stream index of the oldest sample.
        public var firstIndex: UInt64
        /// Host time (s) of the oldest sample.
        public var firstTime: Double
        /// Spacing (s) between the samples.
        public var period: Double
        /// Number of samples.
        public var count: Int

        @inlinable
        public init(firstIndex: UInt64, firstTime: Double, period: Double, count: Int) {
            self.firstIndex = firstIndex
            self.firstTime = firstTime
            self.period = period
            self.count = count
        }

        /// Time of the sample at `offset` (0 = oldest) in this notification.
        @inlinable
        public func time(at offset: Int) -> Double { firstTime + Double(offset) * period }

        /// Stream index of the sample at `offset`.
        @inlinable
        public func index(at offset: Int) -> UInt64 { firstIndex &+ UInt64(truncatingIfNeeded: offset) }
    }

    public let configuration: Configuration
    /// Nominal period (s).
    public let nominalPeriod: Double
    /// Current effective period (s).
    public private(set) var period: Double
    /// Index the next sample will get; also the number of samples stamped since reset.
    public private(set) var nextIndex: UInt64 = 0

    private let windowSamples: UInt64
    private var started = false
    private var refIndex: Double = 0
    private var refTime: Double = 0
    private var lastStamp: Double = 0
    private var originIndex: UInt64 = 0
    private var originTime: Double = 0
    private var windowEnd: UInt64 = 0
    private var windowMinGap: Double = .infinity
    /// Smallest gaps of the two previous windows, relative to the current line.
    private var previousMinGaps: (Double, Double) = (0, 0)
    private var windowBestScore: Double = .infinity
    private var windowBestX: Double = 0
    private var windowBestY: Double = 0
    private var minimaX: [Double] = []
    private var minimaY: [Double] = []
    private var minimaHead = 0
    private var hull: [(x: Double, y: Double)] = []

    /// It is a programmer error to pass a configuration with a non-positive window, fewer than 2
    /// fit windows, negative bounds or a rise gain outside 0...1.
    public init(configuration: Configuration) {
        precondition(configuration.windowDuration > 0, "window duration must be positive")
        precondition(configuration.fitWindowCount >= 2, "the rate fit needs at least 2 windows")
        precondition(configuration.maximumRateError >= 0 && configuration.maximumPeriodStep >= 0, "bounds must be >= 0")
        precondition((0...1).contains(configuration.riseGain), "rise gain must be within 0...1")
        self.configuration = configuration
        nominalPeriod = 1 / configuration.nominalRate
        period = nominalPeriod
        // Int conversion truncates; + 0.5 rounds (positive values) without pulling in libm's round().
        windowSamples = UInt64(max(1, min(1e12, configuration.nominalRate * configuration.windowDuration + 0.5)))
        minimaX.reserveCapacity(configuration.fitWindowCount)
        minimaY.reserveCapacity(configuration.fitWindowCount)
        hull.reserveCapacity(configuration.fitWindowCount)
    }

    public init(nominalRate: Double) { self.init(configuration: Configuration(nominalRate: nominalRate)) }

    /// Starts a new stream: indices restart at 0, the next notification re-anchors, drift is
    /// re-estimated.
    public mutating func reset() { self = SampleClock(configuration: configuration) }

    /// Stamps the `sampleCount` samples (oldest first) of a notification that arrived at
    /// `arrivalTime` (host seconds). Call once per notification, in arrival order.
    public mutating func timestamp(sampleCount: Int, arrivalTime: Double) -> Timing {
        precondition(sampleCount >= 0, "sample count must not be negative")
        let first = nextIndex
        guard sampleCount > 0 else {
            return Timing(firstIndex: first, firstTime: arrivalTime, period: period, count: 0)
        }
        let last = first &+ UInt64(sampleCount - 1)
        nextIndex = last &+ 1

        if !started {
            started = true
            refIndex = Double(last)
            refTime = arrivalTime
            originIndex = last
            originTime = arrivalTime
            windowEnd = last &+ windowSamples
            windowMinGap = 0
            windowBestScore = 0
            windowBestX = 0
            windowBestY = 0
        } else {
            let gap = lineGap(last: last, arrivalTime: arrivalTime)
            refTime = gap.refTime
            if gap.gap < windowMinGap { windowMinGap = gap.gap }
            let x = Double(last - originIndex)
            let y = arrivalTime - originTime
            let score = y - x * nominalPeriod
            if score < windowBestScore {
                windowBestScore = score
                windowBestX = x
                windowBestY = y
            }
        }

        let timing = stamps(first: first, count: sampleCount, refTime: refTime, refIndex: refIndex)
        lastStamp = timing.time(at: sampleCount - 1)

        if last >= windowEnd { closeWindow(last: last) }
        return timing
    }

    /// The stamps that ``timestamp(sampleCount:arrivalTime:)`` would give, without taking the
    /// notification: what a caller that may still refuse it asks first, instead of stamping a copy
    /// of the clock (a copy retains its buffers).
    public func peek(sampleCount: Int, arrivalTime: Double) -> Timing {
        precondition(sampleCount >= 0, "sample count must not be negative")
        let first = nextIndex
        guard sampleCount > 0 else {
            return Timing(firstIndex: first, firstTime: arrivalTime, period: period, count: 0)
        }
        let last = first &+ UInt64(sampleCount - 1)
        guard started else {
            return stamps(first: first, count: sampleCount, refTime: arrivalTime, refIndex: Double(last))
        }
        let refTime = lineGap(last: last, arrivalTime: arrivalTime).refTime
        return stamps(first: first, count: sampleCount, refTime: refTime, refIndex: refIndex)
    }

    /// How far `arrivalTime` lies above the line at `last` (0 when below), and the line's
    /// `refTime` once the envelope rule has moved it down to an arrival below it.
    private func lineGap(last: UInt64, arrivalTime: Double) -> (gap: Double, refTime: Double) {
        let gap = arrivalTime - (refTime + (Double(last) - refIndex) * period)
        // Envelope rule: never stamp a sample after its arrival.
        return gap < 0 ? (0, refTime + gap) : (gap, refTime)
    }

    /// The stamps of `count` samples from index `first` on the line through (`refIndex`,
    /// `refTime`), after the last stamp.
    private func stamps(first: UInt64, count: Int, refTime: Double, refIndex: Double) -> Timing {
        var firstTime = refTime + (Double(first) - refIndex) * period
        if first > 0, firstTime <= lastStamp { firstTime = lastStamp + 0.5 * period }
        return Timing(firstIndex: first, firstTime: firstTime, period: period, count: count)
    }

    private mutating func closeWindow(last: UInt64) {
        // Rise slowly toward the envelope, and only on evidence from three windows in a row: a
        // link stall can hold back every arrival of one or two windows without the line being low.
        let evidence = min(windowMinGap, previousMinGaps.0, previousMinGaps.1)
        var rise = 0.0
        if evidence > 0, evidence.isFinite {
            rise = configuration.riseGain * evidence
            refTime += rise
        }
        previousMinGaps = (windowMinGap.isFinite ? windowMinGap - rise : 0, previousMinGaps.0 - rise)

        // Record this window's envelope point.
        if minimaX.count < configuration.fitWindowCount {
            minimaX.append(windowBestX)
            minimaY.append(windowBestY)
        } else {
            minimaX[minimaHead] = windowBestX
            minimaY[minimaHead] = windowBestY
            minimaHead = (minimaHead + 1) % configuration.fitWindowCount
        }

        if minimaX.count >= configuration.minimumFitWindows, let slope = fitSlope() {
            let lower = nominalPeriod * (1 - configuration.maximumRateError)
            let upper = nominalPeriod * (1 + configuration.maximumRateError)
            let target = min(max(slope, lower), upper)
            let maxStep = nominalPeriod * configuration.maximumPeriodStep
            let step = min(max(target - period, -maxStep), maxStep)
            if step != 0 {
                // Pivot at the next index so stamps stay continuous.
                let pivot = Double(nextIndex)
                refTime += (pivot - refIndex) * period
                refIndex = pivot
                period += step
            }
        }

        while windowEnd <= last { windowEnd &+= windowSamples }
        windowMinGap = .infinity
        windowBestScore = .infinity
    }

    /// Slope (seconds per sample) of the line under all window minima that lies closest to them
    /// on average: the edge of their lower convex hull that spans their mean index (the linear
    /// program of Moon, Skelly & Towsley, "Estimation and removal of clock skew from network delay
    /// measurements", 1999). Minima raised by a link stall sit above the hull and do not move it,
    /// where a least-squares fit would tilt.
    private mutating func fitSlope() -> Double? {
        let n = minimaX.count
        let start = n < configuration.fitWindowCount ? 0 : minimaHead
        hull.removeAll(keepingCapacity: true)
        var meanX = 0.0
        for k in 0..<n {
            let i = (start + k) % n
            let x = minimaX[i]
            let y = minimaY[i]
            meanX += x
            // Monotone chain, lower hull: drop the last point while it is not strictly below the
            // segment from the one before it to the new point.
            while hull.count >= 2 {
                let (ox, oy) = hull[hull.count - 2]
                let (ax, ay) = hull[hull.count - 1]
                if (ax - ox) * (y - oy) - (ay - oy) * (x - ox) > 0 { break }
                hull.removeLast()
            }
            hull.append((x, y))
        }
        guard hull.count >= 2 else { return nil }
        meanX /= Double(n)
        var edge = 0
        while edge < hull.count - 2, hull[edge + 1].x < meanX { edge += 1 }
        let (x0, y0) = hull[edge]
        let (x1, y1) = hull[edge + 1]
        guard x1 > x0 else { return nil }
        let slope = (y1 - y0) / (x1 - x0)
        return slope.isFinite ? slope : nil
    }
}
