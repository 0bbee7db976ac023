import CaptureValues
import GyroStore
import MetaWear
import Synchronization

/// Samples on their way from the sensors' data plane to the ``CaptureEngine``, in batches.
///
/// Why: a sensor's samples are decoded one notification at a time on the data plane's thread,
/// and handing each notification to the engine's actor would cost a task hop (and often a
/// thread wake-up) per packet. Producers append here instead, under one short lock, extending
/// the last run of samples in place when it continues it; the engine takes everything at once
/// when it commits (``CaptureEngine/ingestFeed()``), so the hop happens once per commit.
///
/// Every run carries when its first sample was appended, so the engine's commit deadline
/// (`commitInterval` after a sample arrives) counts from the data plane, not from the batch.
public final class CaptureFeed: Sendable {
    /// Consecutive samples of one sensor stream: the first has stream index `firstIndex`.
    public struct SampleRun: Sendable {
        public var sensor: SensorIdentity
        public var stream: SensorStream
        public var odrHz: Double
        public var range: Double
        public var firstIndex: Int64
        public var samples: [StoredSample]
        /// Why samples are missing before this run, when a gap precedes it.
        public var gapReason: GapReason?
        public var receivedAt: ContinuousClock.Instant

        /// Appends the samples when they continue this run (the next index, the same rate and
        /// range); in place, with one access to the run.
        mutating func extend(firstIndex: Int64, odrHz: Double, range: Double, count: Int,
                             sample: (Int) -> StoredSample) -> Bool {
            guard self.firstIndex + Int64(samples.count) == firstIndex, self.odrHz == odrHz, self.range == range
            else { return false }
            for k in 0..<count { samples.append(sample(k)) }
            return true
        }
    }

    public enum Item: Sendable {
        case samples(SampleRun)
        /// A button press: start a session, or stop the open one (at `atMs`).
        case toggleSession(SensorIdentity, atMs: Double)
    }

    private enum Entry {
        case run(Int)
        case toggleSession(SensorIdentity, atMs: Double)
    }

    /// One sensor stream as the feed knows it, from ``lane(sensor:stream:)``: a producer that
    /// holds it finds the run it continues by index, without comparing identities per append.
    public struct Lane: Sendable, Hashable {
        let id: Int
    }

    private struct LaneState {
        let sensor: SensorIdentity
        let stream: SensorStream
        /// The run this stream's next samples may continue: its last one since the engine took
        /// the feed, unless a button press of the sensor came after it.
        var lastRun: Int?
        /// Sample time (ms) from which this stream's next notification goes to the live tap.
        var liveDueMs = -Double.infinity
        /// Whether a gap came since the last point sent to the live tap.
        var liveGap = false
    }

    private struct State {
        /// What was appended, in order; runs are kept apart so that one grows in place.
        var entries: [Entry] = []
        var runs: [SampleRun] = []
        var samples = 0
        /// Every sensor stream that appended, kept across takes (a few per sensor).
        var lanes: [LaneState] = []
        /// Called when the first item arrives in an empty feed (the committer's alarm).
        var wake: (@Sendable () -> Void)?
        /// The live view's tap, when a page is served; it sees the gyro streams only.
        var live: LiveTap?

        mutating func lane(sensor: SensorIdentity, stream: SensorStream) -> Int {
            if let id = lanes.firstIndex(where: { $0.stream == stream && $0.sensor == sensor }) { return id }
            lanes.append(LaneState(sensor: sensor, stream: stream))
            return lanes.count - 1
        }
    }

    private let state = Mutex(State())

    public init() {}

    /// The lane of one sensor stream, the same for every call with the same pair.
    public func lane(sensor: SensorIdentity, stream: SensorStream) -> Lane {
        Lane(id: state.withLock { $0.lane(sensor: sensor, stream: stream) })
    }

    /// Appends `count` samples of one stream, the first with index `firstIndex`, which arrived
    /// at `receivedAt`; `sample(i)` gives the i-th. A run that continues the stream's last one
    /// (next index, no gap) extends it in place.
    public func append(sensor: SensorIdentity, stream: SensorStream, odrHz: Double, range: Double, firstIndex: Int64,
                       gapReason: GapReason?, receivedAt: @autoclosure () -> ContinuousClock.Instant, count: Int,
                       sample: (Int) -> StoredSample) {
        append(lane(sensor: sensor, stream: stream), odrHz: odrHz, range: range, firstIndex: firstIndex,
               gapReason: gapReason, receivedAt: receivedAt(), count: count, sample: sample)
    }

    /// ``append(sensor:stream:odrHz:range:firstIndex:gapReason:receivedAt:count:sample:)`` for
    /// the sensor stream of `lane`: what the data plane calls once per notification.
    public func append(_ lane: Lane, odrHz: Double, range: Double, firstIndex: Int64, gapReason: GapReason?,
                       receivedAt: @autoclosure () -> ContinuousClock.Instant, count: Int,
                       sample: (Int) -> StoredSample) {
        guard count > 0 else { return }
        var livePoint: (tap: LiveTap, device: String, sample: StoredSample, gap: Bool)?
        let wake: (@Sendable () -> Void)? = state.withLock { state in
            state.samples += count
            if let live = state.live, state.lanes[lane.id].stream == .gyro {
                let last = sample(count - 1)
                let due = state.lanes[lane.id].liveDueMs
                if gapReason != nil { state.lanes[lane.id].liveGap = true }
                // A stream restarted on an earlier clock must not stall the view.
                if last.timestampMs >= due || last.timestampMs < due - 10 * live.intervalMs - 5000 {
                    // On a grid, so that a rate just above the points' cannot halve them.
                    let next = due + live.intervalMs
                    state.lanes[lane.id].liveDueMs = next > last.timestampMs ? next : last.timestampMs + live.intervalMs
                    livePoint = (live, state.lanes[lane.id].sensor.device, last, state.lanes[lane.id].liveGap)
                    state.lanes[lane.id].liveGap = false
                }
            }
            if gapReason == nil, let index = state.lanes[lane.id].lastRun,
               state.runs[index].extend(firstIndex: firstIndex, odrHz: odrHz, range: range, count: count, sample: sample) {
                return nil
            }
            var samples: [StoredSample] = []
            samples.reserveCapacity(max(count, 128))
            for k in 0..<count { samples.append(sample(k)) }
            let sensor = state.lanes[lane.id].sensor
            let stream = state.lanes[lane.id].stream
            state.lanes[lane.id].lastRun = state.runs.count
            state.entries.append(.run(state.runs.count))
            state.runs.append(SampleRun(sensor: sensor, stream: stream, odrHz: odrHz, range: range, firstIndex: firstIndex,
                                        samples: samples, gapReason: gapReason, receivedAt: receivedAt()))
            return state.entries.count == 1 ? state.wake : nil
        }
        wake?()
        if let live = livePoint {
            live.tap.record(device: live.device, timestampMs: live.sample.timestampMs, x: live.sample.x, y: live.sample.y,
                            z: live.sample.z, gap: live.gap)
        }
    }

    public func toggleSession(_ sensor: SensorIdentity, atMs: Double) {
        let wake = state.withLock { state in
            state.entries.append(.toggleSession(sensor, atMs: atMs))
            for id in state.lanes.indices where state.lanes[id].sensor == sensor { state.lanes[id].lastRun = nil }
            return state.wake
        }
        wake?()
    }

    /// Sets what is called, outside the lock, when an empty feed gets its first item and at every
    /// button press: the committer, which then knows when the next commit is due without polling.
    func setWake(_ wake: (@Sendable () -> Void)?) {
        state.withLock { $0.wake = wake }
    }

    /// Sends a few points per second of every gyro stream to `tap` (the live view), from now on.
    public func setLiveTap(_ tap: LiveTap?) {
        state.withLock { $0.live = tap }
    }

    /// Takes everything appended so far, oldest first (each sensor's items in order).
    public func take() -> [Item] {
        let (entries, runs) = state.withLock { state in
            state.samples = 0
            for id in state.lanes.indices { state.lanes[id].lastRun = nil }
            defer { (state.entries, state.runs) = ([], []) }
            return (state.entries, state.runs)
        }
        return entries.map { entry in
            switch entry {
            case .run(let index): .samples(runs[index])
            case .toggleSession(let sensor, let atMs): .toggleSession(sensor, atMs: atMs)
            }
        }
    }

    /// When the oldest sample waiting here was appended.
    public var oldest: ContinuousClock.Instant? {
        state.withLock { state in state.runs.lazy.map(\.receivedAt).min() }
    }

    /// Samples waiting here.
    public var pendingSamples: Int { state.withLock { $0.samples } }
}
