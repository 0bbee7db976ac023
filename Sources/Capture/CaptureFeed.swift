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

    private struct State {
        var items: [Item] = []
        var samples = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Appends `count` samples of one stream, the first with index `firstIndex`, which arrived
    /// at `receivedAt`; `sample(i)` gives the i-th. A run that continues the last one (same
    /// stream, next index, no gap) extends it in place.
    public func append(sensor: SensorIdentity, stream: SensorStream, odrHz: Double, range: Double, firstIndex: Int64,
                       gapReason: String?, receivedAt: @autoclosure () -> ContinuousClock.Instant, count: Int,
                       sample: (Int) -> StoredSample) {
        guard count > 0 else { return }
        state.withLock { state in
            state.samples += count
            if gapReason == nil, case .samples(var run)? = state.items.last, run.stream == stream,
               run.firstIndex + Int64(run.samples.count) == firstIndex, run.odrHz == odrHz, run.range == range,
               run.sensor == sensor {
                state.items.removeLast()  // moved out, so that its array grows in place
                for index in 0..<count { run.samples.append(sample(index)) }
                state.items.append(.samples(run))
                return
            }
            var samples: [StoredSample] = []
            samples.reserveCapacity(max(count, 64))
            for index in 0..<count { samples.append(sample(index)) }
            state.items.append(.samples(SampleRun(sensor: sensor, stream: stream, odrHz: odrHz, range: range,
                                                  firstIndex: firstIndex, samples: samples, gapReason: gapReason,
                                                  receivedAt: receivedAt())))
        }
    }

    public func toggleSession(_ sensor: SensorIdentity, atMs: Double) {
        state.withLock { $0.items.append(.toggleSession(sensor, atMs: atMs)) }
    }

    /// Takes everything appended so far, oldest first.
    public func take() -> [Item] {
        state.withLock { state in
            state.samples = 0
            defer { state.items = [] }
            return state.items
        }
    }

    /// When the oldest sample waiting here was appended.
    public var oldest: ContinuousClock.Instant? {
        state.withLock { state in
            for item in state.items { if case .samples(let run) = item { return run.receivedAt } }
            return nil
        }
    }

    /// Samples waiting here.
    public var pendingSamples: Int { state.withLock { $0.samples } }
}
