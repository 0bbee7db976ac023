// StreamTracker: stream indices, gaps and timestamps for one sensor stream (gyro or accelerometer).
//
// A MetaWear notification carries no sample counter (protocol reference, section 10), so the index
// of a sample is derived: it counts the samples the board produced, and every sample lost on the
// way must still take an index, or the capture engine could not see the gap. Two places lose
// samples:
//
// 1. Within a connection (board-side drops, a "silent" board that comes back before the watchdog
//    fires). BLE is reliable within a connection, so a loss shows only as a *step* in arrival
//    times: every notification after it arrives m·P later than the drift-corrected line predicts
//    (P = period). The tracker feeds a *copy* of the SampleClock and computes each
//    notification's residual, arrival − stamp of its last sample (≥ 0 by the clock's envelope
//    rule). A residual of at least half a period (or 1.25 steps of coarse times, such as the
//    board's 1.46 ms ticks) makes the notification a suspect: it and what
//    follows are held for `confirmationWindow` of arrival time. Jitter and host stalls deliver
//    late and then catch up, so some held residual returns near 0; a real loss keeps them all
//    up, so m = floor(lift / P + 0.25) ≥ 1 samples are declared missing before the suspect, where
//    lift = min held residual − baseline (the smallest residual of the previous second). Held
//    notifications are then accepted up to the first one from which every later one is still
//    lifted: that one is the next suspect. A suspect clearly below everything after it is a late
//    notification from before a loss, and is accepted as is. The clock is given
//    the missing samples too, stamped at the suspect's arrival (late, so they never move its
//    envelope), which keeps its drift estimate across the gap. Cost: up to `confirmationWindow`
//    of extra latency after a suspect; a drift not yet learnt by the clock (its first ~10 s,
//    real boards only: the peer's rate is exact) can be taken for a loss at high rates.
//    The stream is anchored at its start on the lowest arrival of its first `warmUpWindow` (at
//    most `confirmationWindow`; shorter when samples must reach the store sooner after a start).
// 2. A board that kept streaming while the link was down: the gateway keeps its stale samples
//    (see MetaWearBoard) and the outage is a step in their arrival times, found as in 1.
// 3. Across a reconnect or re-initialisation (``StreamEnd``). A board that kept streaming on the
//    new link delivered every sample up to the stop (case 2 found the outage): nothing more is
//    missing. A board that reset stopped at the reset: the samples due between the last sample
//    received and the reset are missing, m = floor((resetTime − lastStamp) / P_nominal), less half
//    a sample when the link stayed up until the reset (a sample due just before it was on its way,
//    not lost). The reset time read off the board's log clock carries the read's latency, as the
//    stamp carries the smallest transport latency, so this count is an estimate: a caller that can
//    learn the exact one (the board's log) holds the new stream (``holdForResetCount()``) and
//    settles it (``settleResetCount(_:_:)``) before any sample of the new stream gets its index.
//    Otherwise the board ran at most until the stop: m = round((stopTime − lastStamp) / P_nominal),
//    ±1 sample from the unknown latency. The new stream (the board restarts its own count at the
//    start command) continues the index after them.
//
// Indices are Int64 stream indices as the capture engine wants them; stamps are host seconds.

import CaptureValues

public struct StreamTracker: Sendable {
    /// Samples ready for the capture engine: consecutive indices from `firstIndex`.
    public struct Batch: Sendable, Equatable {
        public var firstIndex: Int64
        public var samples: [TimestampedSample]
        /// Set when a gap precedes this batch: why, for the gap record.
        public var gapReason: GapReason?
    }

    public let odrHz: Double
    public let decoder: SampleDecoder
    /// How long a suspect notification is held for confirmation (arrival time, seconds).
    public var confirmationWindow: Double
    /// How long the start of a board stream is held to anchor the clock (arrival time, seconds).
    public var warmUpWindow: Double

    /// The index the next sample gets.
    public private(set) var nextIndex: Int64 = 0
    /// Stamp (s) of the last sample handed out, if any.
    public private(set) var lastStamp: Double?
    /// Samples declared missing so far, by either method.
    public private(set) var missingSamples: Int64 = 0
    /// Gaps declared so far.
    public private(set) var gapCount = 0
    /// Samples received from the board.
    public private(set) var receivedSamples: Int64 = 0

    private var clock: SampleClock
    /// First stream index of the current board stream (the clock's index 0).
    private var segmentBase: Int64 = 0
    private var held: [(samples: RawTriples, arrival: Double)] = []
    private var residuals: [Double] = []
    private var suffix: [Double] = []
    private var pendingReason: GapReason?
    /// The samples of the batch being handed out, reused from one batch to the next.
    private var decoded: [TimestampedSample] = []
    /// Smallest residuals of accepted notifications in the current and the previous bucket of
    /// `confirmationWindow`: the baseline that a loss lifts. (The clock's line can sit a little
    /// below the envelope under heavy jitter, so residuals are compared with it, not with 0.)
    private var baseCurrent = Double.infinity
    private var basePrevious = Double.infinity
    private var baseBucketEnd = -Double.infinity
    /// At the start of a board stream, notifications are held for `warmUpWindow` and the
    /// clock is anchored on the lowest of them (the first arrival alone may be late by jitter).
    private var warming = true
    /// When the board's counter restarted without a start command from the gateway (it resumed its
    /// streams after a reset): the samples due between then and the first one received are missing.
    private var runStart: Double?
    /// The reset's estimated count while the new stream is held for the exact one.
    private var heldEstimate: Int64?
    /// Samples declared missing by the last ``restart(end:reason:)``.
    private var lastRestartMissing: Int64 = 0

    /// How far above the baseline a residual must lie to make its notification a suspect: half a
    /// period, or more when the times come in coarser steps (see `init`).
    private let suspectLift: Double

    /// `stampResolution` (s): the step of the times passed as arrivals when they are coarse, as
    /// the board's ticks (1.46 ms) are. A suspect must lie above it, or at 400 Hz (half a period
    /// 1.25 ms) every notification late in its tick would be held for confirmation.
    public init(odrHz: Double, decoder: SampleDecoder, confirmationWindow: Double = 0.5, warmUpWindow: Double? = nil,
                stampResolution: Double = 0) {
        self.odrHz = odrHz
        self.decoder = decoder
        self.confirmationWindow = confirmationWindow
        self.warmUpWindow = min(warmUpWindow ?? confirmationWindow, confirmationWindow)
        clock = SampleClock(nominalRate: odrHz)
        suspectLift = max(0.5 / odrHz, 1.25 * stampResolution)
    }

    /// The reason for the next gap found from arrival times, when the caller knows one (the link
    /// dropped, the board went silent); "notReceived" otherwise.
    public var nextGapReason: GapReason?

    /// Samples are held for confirmation.
    public var isHolding: Bool { !held.isEmpty }

    /// Samples received and held for confirmation: they are counted in ``receivedSamples`` and
    /// get their indices (from ``nextIndex`` on, after any gap found before them) when released.
    public var heldSampleCount: Int { held.reduce(0) { $0 + $1.samples.count } }

    /// Takes over a stream an earlier run of the gateway indexed: the next sample gets `index`
    /// (a gap with `reason` before it when that is above what the earlier run stored), and
    /// `lastStamp` is when that run's last sample was due, for ``restart(end:reason:)``.
    public mutating func resume(at index: Int64, lastStamp: Double?, reason: GapReason) {
        precondition(held.isEmpty && receivedSamples == 0, "resume a new tracker")
        nextIndex = index
        segmentBase = index
        self.lastStamp = lastStamp
        pendingReason = reason
    }

    /// Starts a new board stream after an interruption that ended the old one as `end` says: the
    /// samples the board produced after the last stamp and never delivered are declared missing
    /// with `reason`. Flush held samples first (``flush()``).
    public mutating func restart(end: StreamEnd, reason: GapReason) {
        precondition(held.isEmpty, "flush before restarting")
        if let lastStamp {
            let missing: Int64
            switch end {
            case .delivered: missing = 0
            case .reset(let time, let linkUp): missing = Self.wholeSamples((time - lastStamp) * odrHz - (linkUp ? 0.5 : 0))
            case .stopped(let time): missing = Self.wholeSamples((time - lastStamp) * odrHz + 0.5)
            }
            if missing > 0 {
                nextIndex += missing
                missingSamples += missing
                gapCount += 1
            }
            lastRestartMissing = missing
            pendingReason = reason
        }
        if case .reset(let time, _) = end {
            // The old run ended at the reset; a run the board resumes on its own starts there, and
            // the samples it produced before the first one received are missing for the same reason.
            lastStamp = nil
            runStart = time
            pendingReason = reason
        } else {
            runStart = nil
        }
        nextGapReason = nil
        segmentBase = nextIndex
        clock.reset()
        (baseCurrent, basePrevious, baseBucketEnd) = (.infinity, .infinity, -.infinity)
        warming = true
    }

    /// After a ``restart(end:reason:)`` with ``StreamEnd/reset(at:linkUp:)``: holds the new stream's
    /// samples (they get no index) until ``settleResetCount(_:_:)`` gives the exact count of the
    /// samples the board produced between the last one received and the reset. A flush gives up
    /// and keeps the estimate.
    public mutating func holdForResetCount() {
        precondition(warming && held.isEmpty, "hold right after the restart")
        heldEstimate = lastRestartMissing
    }

    /// Whether the new stream waits for ``settleResetCount(_:_:)``.
    public var awaitsResetCount: Bool { heldEstimate != nil }

    /// Replaces the reset's estimated count with `missing` (nil: the estimate stands), then
    /// releases the new stream as its warm-up allows.
    public mutating func settleResetCount(_ missing: Int64?, _ sink: (Batch) -> Void) {
        guard let estimate = heldEstimate else { return }
        heldEstimate = nil
        if let missing, missing >= 0, missing != estimate {
            let delta = missing - estimate
            nextIndex += delta
            segmentBase += delta
            missingSamples += delta
            if estimate == 0 { gapCount += 1 } else if missing == 0 { gapCount -= 1 }
            lastRestartMissing = missing
        }
        if warming, let first = held.first, let last = held.last, last.arrival - first.arrival >= warmUpWindow {
            finishWarmUp(sink)
        }
    }

    /// Takes one notification's samples (oldest first) that arrived at `arrival` (host seconds),
    /// and hands what is ready to `sink`, oldest first.
    ///
    /// A batch's `samples` are the tracker's own buffer, refilled for the next batch: a sink that
    /// copies them out (and keeps no reference) lets the data plane run without an allocation
    /// per notification.
    public mutating func push(_ samples: RawTriples, arrival: Double, _ sink: (Batch) -> Void) {
        receivedSamples += Int64(samples.count)
        if warming {
            held.append((samples, arrival))
            if heldEstimate == nil, arrival - held[0].arrival >= warmUpWindow { finishWarmUp(sink) }
        } else if held.isEmpty {
            let lift = residual(clock.peek(sampleCount: samples.count, arrivalTime: arrival), arrival)
            if lift - baseline < suspectLift {
                let timing = clock.timestamp(sampleCount: samples.count, arrivalTime: arrival)
                noteAccepted(lift, arrival)
                emit(samples, timing, sink)
            } else {
                held.append((samples, arrival))
            }
        } else {
            held.append((samples, arrival))
            if arrival - held[0].arrival >= confirmationWindow { resolve(sink) }
        }
    }

    /// ``push(_:arrival:_:)``, collecting the batches.
    public mutating func push(_ samples: RawTriples, arrival: Double) -> [Batch] {
        var out: [Batch] = []
        push(samples, arrival: arrival) { out.append($0) }
        return out
    }

    /// Decides on held samples with what has arrived (link lost, stream stopping).
    public mutating func flush(_ sink: (Batch) -> Void) {
        if warming, !held.isEmpty { finishWarmUp(sink, final: true) }
        while !held.isEmpty { resolve(sink, final: true) }
    }

    /// ``flush(_:)``, collecting the batches.
    public mutating func flush() -> [Batch] {
        var out: [Batch] = []
        flush { out.append($0) }
        return out
    }

    /// Anchors the clock under the lowest held arrival, projected back to the first notification
    /// at the nominal period, then replays the rest.
    private mutating func finishWarmUp(_ sink: (Batch) -> Void, final: Bool = false) {
        warming = false
        heldEstimate = nil
        let items = held
        held = []
        var position = 0
        var anchor = Double.infinity
        for item in items {
            position += item.samples.count
            anchor = min(anchor, item.arrival - Double(position - items[0].samples.count) * clock.nominalPeriod)
        }
        let first = clock.timestamp(sampleCount: items[0].samples.count, arrivalTime: anchor)
        if let runStart {
            // Sample 0 of the run was due at its start: the first one received is sample k.
            let lead = Self.wholeSamples((first.firstTime - runStart) * odrHz + 0.5)
            if lead > 0 {
                segmentBase += lead
                nextIndex += lead
                missingSamples += lead
                gapCount += 1
            }
            self.runStart = nil
        }
        noteAccepted(residual(first, anchor), items[0].arrival)
        emit(items[0].samples, first, sink)
        replay(items.dropFirst(), sink, final: final)
    }

    private mutating func replay(_ items: ArraySlice<(samples: RawTriples, arrival: Double)>, _ sink: (Batch) -> Void,
                                 final: Bool) {
        for item in items {
            if final && !held.isEmpty {
                held.append(item)
            } else {
                push(item.samples, arrival: item.arrival, sink)
                receivedSamples -= Int64(item.samples.count)  // counted when first pushed
            }
        }
    }

    /// floor(x) for x ≥ 0, 0 below (and for NaN); Int conversion truncates, so no libm.
    private static func wholeSamples(_ x: Double) -> Int64 {
        guard x >= 1 else { return 0 }
        return Int64(min(x, 1e15))
    }

    private var baseline: Double {
        let value = min(baseCurrent, basePrevious)
        return value.isFinite ? value : 0
    }

    private mutating func noteAccepted(_ residual: Double, _ arrival: Double) {
        if arrival >= baseBucketEnd {
            basePrevious = baseCurrent
            baseCurrent = .infinity
            baseBucketEnd = arrival + confirmationWindow
        }
        baseCurrent = min(baseCurrent, residual)
    }

    private func residual(_ timing: SampleClock.Timing, _ arrival: Double) -> Double {
        arrival - timing.time(at: timing.count - 1)
    }

    private mutating func resolve(_ sink: (Batch) -> Void, final: Bool = false) {
        var trial = clock
        residuals.removeAll(keepingCapacity: true)
        for item in held {
            let timing = trial.timestamp(sampleCount: item.samples.count, arrivalTime: item.arrival)
            residuals.append(residual(timing, item.arrival))
        }
        // Suffix minima: suffix[k] = smallest residual from held[k] on.
        suffix = residuals
        if suffix.count > 1 { for k in stride(from: suffix.count - 2, through: 0, by: -1) { suffix[k] = min(suffix[k], suffix[k + 1]) } }
        var minimum = suffix[0]
        // A suspect clearly below everything after it is a late notification from before a loss
        // that follows it: accept it as is; the loss is found where it is.
        if residuals.count > 1, residuals[0] < suffix[1] - 0.5 * clock.nominalPeriod { minimum = baseline }
        // On a final flush the window may be short: only a lift of 20 ms (and 2 periods) or more
        // counts, as after a reconnect to a board that kept streaming. A smaller loss left here
        // stamps the held samples early by it, and restart() counts it from the stop instead.
        // floor(x + 0.25) rather than round(x): a loss keeps every later residual up by m·P and
        // the window's minimum lands close to it; a false suspect is judged only on the items
        // before a later real loss, whose minimum can stay well above the jitter floor.
        var missing = Self.wholeSamples((minimum - baseline) / clock.nominalPeriod + 0.25)
        if final, minimum - baseline < max(0.02, 2 * clock.nominalPeriod) { missing = 0 }
        if missing >= 1 {
            _ = clock.timestamp(sampleCount: Int(missing), arrivalTime: held[0].arrival)
            nextIndex += missing
            missingSamples += missing
            gapCount += 1
            pendingReason = nextGapReason ?? .notReceived
            nextGapReason = nil
        }
        // Accept the suspect and every held notification up to the first one from which all are
        // still lifted by half a period (after the gap just declared): that one, if any, is the next
        // suspect, and its window starts at its own arrival.
        let shift = Double(missing) * clock.nominalPeriod
        let threshold = baseline + shift + suspectLift
        var accept = 1
        while accept < held.count, suffix[accept] < threshold { accept += 1 }
        for item in held[..<accept] {
            let timing = clock.timestamp(sampleCount: item.samples.count, arrivalTime: item.arrival)
            noteAccepted(residual(timing, item.arrival), item.arrival)
            emit(item.samples, timing, sink)
        }
        held.removeFirst(accept)
        if !final, let newest = held.last, newest.arrival - held[0].arrival >= confirmationWindow {
            resolve(sink)
        }
    }

    private mutating func emit(_ samples: RawTriples, _ timing: SampleClock.Timing, _ sink: (Batch) -> Void) {
        let first = segmentBase + Int64(timing.firstIndex)
        precondition(first == nextIndex, "stream index out of step")
        // Overwritten in place: a notification carries as many samples as the one before, and
        // emptying the buffer goes through the generic `replaceSubrange`.
        if decoded.count > samples.count { decoded.removeLast(decoded.count - samples.count) }
        for k in samples.indices {
            let value = decoder.scale(samples[k])
            let sample = TimestampedSample(index: UInt64(first) + UInt64(k), time: timing.time(at: k),
                                           x: value.x, y: value.y, z: value.z)
            if k < decoded.count { decoded[k] = sample } else { decoded.append(sample) }
        }
        nextIndex = first + Int64(samples.count)
        lastStamp = decoded.last?.time ?? lastStamp
        let reason = pendingReason
        pendingReason = nil
        sink(Batch(firstIndex: first, samples: decoded, gapReason: reason))
    }
}
