import GyroStore
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
        public var gapReason: String?
        public var receivedAt: ContinuousClock.Instant
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

    private struct State {
        /// What was appended, in order; runs are kept apart so that one grows in place.
        var entries: [Entry] = []
        var runs: [SampleRun] = []
        var samples = 0
        /// Called when the first item arrives in an empty feed (the committer's alarm).
        var wake: (@Sendable () -> Void)?

        /// The run that `firstIndex` continues: the last one of the same sensor stream, if no
        /// button press of that sensor came after it. Sensors interleave, so the last entry is
        /// usually another sensor's; only the few newest are looked at.
        func continued(sensor: SensorIdentity, stream: SensorStream, odrHz: Double, range: Double,
                       firstIndex: Int64) -> Int? {
            for entry in entries.reversed().prefix(32) {
                switch entry {
                case .toggleSession(let other, _):
                    if other == sensor { return nil }
                case .run(let index):
                    // Field by field: a copy of the run would retain its strings and samples.
                    guard runs[index].stream == stream, runs[index].sensor == sensor else { continue }
                    let continues = runs[index].firstIndex + Int64(runs[index].samples.count) == firstIndex
                        && runs[index].odrHz == odrHz && runs[index].range == range
                    return continues ? index : nil
                }
            }
            return nil
        }
    }

    private let state = Mutex(State())

    public init() {}

    /// Appends `count` samples of one stream, the first with index `firstIndex`, which arrived
    /// at `receivedAt`; `sample(i)` gives the i-th. A run that continues the stream's last one
    /// (next index, no gap) extends it in place.
    public func append(sensor: SensorIdentity, stream: SensorStream, odrHz: Double, range: Double, firstIndex: Int64,
                       gapReason: String?, receivedAt: @autoclosure () -> ContinuousClock.Instant, count: Int,
                       sample: (Int) -> StoredSample) {
        guard count > 0 else { return }
        let wake: (@Sendable () -> Void)? = state.withLock { state in
            state.samples += count
            if gapReason == nil,
               let index = state.continued(sensor: sensor, stream: stream, odrHz: odrHz, range: range, firstIndex: firstIndex) {
                for k in 0..<count { state.runs[index].samples.append(sample(k)) }
                return nil
            }
            var samples: [StoredSample] = []
            samples.reserveCapacity(max(count, 128))
            for k in 0..<count { samples.append(sample(k)) }
            state.entries.append(.run(state.runs.count))
            state.runs.append(SampleRun(sensor: sensor, stream: stream, odrHz: odrHz, range: range, firstIndex: firstIndex,
                                        samples: samples, gapReason: gapReason, receivedAt: receivedAt()))
            return state.entries.count == 1 ? state.wake : nil
        }
        wake?()
    }

    public func toggleSession(_ sensor: SensorIdentity, atMs: Double) {
        let wake = state.withLock { state in
            state.entries.append(.toggleSession(sensor, atMs: atMs))
            return state.wake
        }
        wake?()
    }

    /// Sets what is called, outside the lock, when an empty feed gets its first item and at every
    /// button press: the committer, which then knows when the next commit is due without polling.
    func setWake(_ wake: (@Sendable () -> Void)?) {
        state.withLock { $0.wake = wake }
    }

    /// Takes everything appended so far, oldest first (each sensor's items in order).
    public func take() -> [Item] {
        let (entries, runs) = state.withLock { state in
            state.samples = 0
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
