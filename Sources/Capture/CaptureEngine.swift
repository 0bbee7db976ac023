import CaptureValues
import FoundationEssentials
import GyroStore
import HostTime
import Logging
import MetaWear

/// Turns samples into sessions, chunks and documents, and commits them to the store.
///
/// Design: the actor owns every open session and the changes not yet committed. Samples are
/// appended in memory, either directly (``append(sensor:stream:odrHz:range:firstIndex:samples:gapReason:receivedAt:)``)
/// or, from the sensors' data plane, through ``feed``, which the committer takes in at every
/// wake-up (``ingestFeed()``); a commit (one store transaction) happens when a chunk fills, when the
/// oldest uncommitted sample is `commitInterval` old (while samples stream, up to a quarter of
/// it earlier: `earlyCommit`), and at every session start and stop.
/// While `run()` runs, it is the committer: a full chunk is committed there while the producer
/// goes on filling the next one (the data plane fills, the writer's thread renders and
/// writes); a producer that gets two full chunks ahead waits for the commit. Without `run()`, `append`
/// commits full chunks itself. Commits are serialised: one is in flight at a time (each batch
/// of a retention pass, which rewrites session rows, holds the same lock), and changes made meanwhile go to
/// the next one. A failed commit is kept and retried first in the next
/// one, so nothing handed to the engine is dropped by a transient store error.
///
/// The engine runs on the store writer's thread (`GyroStore.writerExecutor`): a commit is a
/// synchronous call on the thread that owns the writer connection, and the committer's alarms
/// are that thread's timers, so a commit wakes one thread, not a dispatch worker, the writer
/// and a worker again. Rendering a full chunk runs there too, between writes.
public actor CaptureEngine {
    public nonisolated let store: GyroStore
    public nonisolated let rules: CaptureRules
    let calendar: PeriodCalendar
    let renderer: DocumentRenderer
    let logger: Logger
    /// Milliseconds on the gateway's timeline (`GatewayClock.timeline()`), the frame the sensors
    /// stamp in; injected so that tests control idle timeouts.
    let timelineMs: @Sendable () -> Double
    /// The gateway's clock, which the board clocks may date (``boardClockRead(device:resetUID:measuredResetTime:)``).
    public nonisolated let clock: GatewayClock?
    /// True time minus the timeline (ms) as this engine applies it: added to every time the
    /// sensors hand in, changed only by ``redate(_:)``, together with what it stored before.
    var correctionMs = 0.0
    /// How the times this engine dates now are dated.
    public internal(set) var dating: Dating
    /// The sessions this run dated, which a re-dating moves (see `RunSession`).
    var runSessions: [String: RunSession] = [:]
    /// Board reset times this run saved (true time, s), which a re-dating moves too.
    var runResetTimes: [String: [UInt8: Double]] = [:]
    /// Each user's medals as this run found them: a re-dating re-evaluates what it earned since.
    var medalsAtRunStart: [String: Medals] = [:]
    /// While a re-dating runs, what would change sessions waits (`waitWhileRedating()`).
    var redatingInProgress = false
    var redatingWaiters: [CheckedContinuation<Void, Never>] = []
    /// Called after every successful commit that added outbox rows, and after a retention pass
    /// or a backfill that did (the daemon wakes the MQTT publisher with it).
    let onCommit: @Sendable () -> Void

    var open: [String: OpenSession] = [:]
    var pending = StoreChanges()
    var failed: StoreChanges?
    var failedSamples: Int64 = 0
    /// When the kept failed commit failed: the committer retries it a commit interval later.
    var failedAt: ContinuousClock.Instant?
    var pendingSince: ContinuousClock.Instant?
    var commitInFlight = false
    var commitWaiters: [CheckedContinuation<Void, Never>] = []
    /// Chunks one retention transaction removes at most (``enforceRetention()``).
    var retentionBatchChunks = RetentionProgress.defaultBatchChunks
    /// Tests: runs between two retention batches instead of the yield (`observeRetentionBatches`).
    var retentionBatchObserver: (@Sendable (RetentionReport) async -> Void)?
    /// Wakes the `run()` loop, the committer, while it runs.
    var commitSignal: AsyncStream<Void>.Continuation?
    /// Full chunks waiting for the committer.
    var closedChunksPending = 0
    var medalCache: [String: Medals] = [:]
    /// Whether the store can take writes; see ``CaptureEngine/storeCondition``.
    public internal(set) var storeCondition = StoreCondition.writable
    public internal(set) var counters = CaptureCounters()
    /// Samples accepted since the last commit began.
    var uncommittedSamples: Int64 = 0
    /// Where the sensors' data plane leaves samples for this engine (see ``CaptureFeed``).
    public nonisolated let feed = CaptureFeed()
    var ingesting = false
    var ingestWaiters: [CheckedContinuation<Void, Never>] = []

    public nonisolated var unownedExecutor: UnownedSerialExecutor { store.writerExecutor.asUnownedSerialExecutor() }

    public init(store: GyroStore, rules: CaptureRules, calendar: PeriodCalendar, renderer: DocumentRenderer = DocumentRenderer(),
                logger: Logger, now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 * 1000 },
                clock: GatewayClock? = nil, onCommit: @escaping @Sendable () -> Void = {}) {
        self.store = store
        self.rules = rules
        self.calendar = calendar
        self.renderer = renderer
        self.logger = logger
        self.timelineMs = now
        self.clock = clock
        self.onCommit = onCommit
        dating = clock?.dating ?? .synchronised
        correctionMs = (clock?.correction ?? 0) * 1000
    }

    /// Epoch milliseconds now, in true time as this engine dates it.
    func now() -> Double { timelineMs() + correctionMs }

    // MARK: - Samples

    /// Appends samples of one stream. `samples` are consecutive: the first has stream index
    /// `firstIndex`, the next `firstIndex + 1`, … An index above the expected one records a
    /// gap (with `gapReason`, "notReceived" unless the producer knows better, e.g. a
    /// disconnection); indices already stored are dropped as duplicates. `receivedAt` is when
    /// the first sample arrived: the commit that holds it is due `commitInterval` after that.
    public func append(sensor: SensorIdentity, stream: SensorStream, odrHz: Double, range: Double,
                       firstIndex: Int64, samples: [StoredSample], gapReason: GapReason = .notReceived,
                       receivedAt: ContinuousClock.Instant = .now) async throws {
        if redatingInProgress { await waitWhileRedating() }
        guard let firstSample = samples.first else { return }
        let firstMs = firstSample.timestampMs + correctionMs
        if let session = open[sensor.device], firstMs - session.record.startMs >= rules.maxDurationMs {
            let carried = session.streams.mapValues { ($0.nextIndex, $0.chunk.odrHz, $0.chunk.range) }
            try await stopSession(device: sensor.device, reason: "maximum duration")
            let next = try await startSession(sensor: sensor, atMs: firstMs)
            for (carriedStream, (index, streamOdr, streamRange)) in carried where open[sensor.device] != nil {
                open[sensor.device]?.streams[carriedStream] = newStream(carriedStream, index, next, streamOdr, streamRange)
            }
        }
        // No suspension between finding the session open and accepting the samples: a session
        // that closed while this call was suspended is started again, never silently missed.
        while open[sensor.device] == nil {
            guard rules.autoStart else {
                counters.samplesWithoutSession += Int64(samples.count)
                return
            }
            try await startSession(sensor: sensor, atMs: firstMs)
        }
        // The disk is full and the last commit failed: beyond a bounded buffer, samples are not
        // kept but recorded as storeFull gaps, so memory stays bounded and the session honest.
        let keep = !(storeCondition.isFull && failed != nil && failedSamples + uncommittedSamples >= Int64(rules.fullBufferSamples))
        let closedChunk = accept(device: sensor.device, stream: stream, odrHz: odrHz, range: range, firstIndex: firstIndex,
                                 samples: samples, shiftMs: correctionMs, gapReason: gapReason, keep: keep)
        let firstPending = pendingSince == nil
        pendingSince = min(pendingSince ?? receivedAt, receivedAt)
        if closedChunk { closedChunksPending += 1 }
        if let commitSignal, closedChunksPending < 2 {
            if closedChunksPending > 0 || firstPending { commitSignal.yield() }
        } else if closedChunksPending > 0 || ContinuousClock.now - pendingSince! >= rules.commitInterval {
            try await commit()
        }
    }

    /// Copies samples into the open chunk of `stream`, closing chunks as they fill; their times
    /// move by `shiftMs` on the way (the timeline to true time). Returns whether a chunk was closed.
    private func accept(device: String, stream: SensorStream, odrHz: Double, range: Double, firstIndex: Int64, samples: [StoredSample],
                        shiftMs: Double, gapReason: GapReason, keep: Bool = true) -> Bool {
        // Take the session and stream out of their dictionaries while mutating them, so the
        // chunk's sample array is not copied on write.
        guard var session = open.removeValue(forKey: device) else { return false }
        var state = session.streams.removeValue(forKey: stream) ?? newStream(stream, firstIndex, session.record, odrHz, range)
        var closed = false
        if state.chunk.odrHz != odrHz || state.chunk.range != range {
            if !state.samples.isEmpty { closeChunk(&state, session: &session); closed = true }
            state = newStream(stream, max(firstIndex, state.nextIndex), session.record, odrHz, range, seq: state.chunk.seq + (closed ? 1 : 0))
        }
        var start = 0
        if firstIndex < state.nextIndex {
            start = Int(min(Int64(samples.count), state.nextIndex - firstIndex))
            counters.duplicateSamples += Int64(start)
        }
        guard start < samples.count else {
            session.streams[stream] = state
            open[device] = session
            return closed
        }
        let index = firstIndex + Int64(start)
        if index > state.nextIndex {
            let gap = gapRange(stream: stream, state: state, index: index, atMs: samples[start].timestampMs + shiftMs, odrHz: odrHz, reason: gapReason)
            if !state.samples.isEmpty, !rules.newChunkAtGap.isEmpty, rules.newChunkAtGap.contains(device.uppercased()) {
                closeChunk(&state, session: &session)
                closed = true
                state = newStream(stream, index, session.record, odrHz, range, seq: state.chunk.seq + 1)
            }
            state.chunk.gaps.append(gap)
            session.record.gaps.append(gap)
            session.record.expected += gap.missing
            counters.missingSamples += gap.missing
            counters.gaps += 1
            if state.samples.isEmpty { state.chunk.firstIndex = index }
            state.rowDirty = true
            session.rowDirty = true
        }
        guard keep else {
            refuse(samples[start...], shiftMs: shiftMs, from: index, stream: stream, state: &state, session: &session)
            session.streams[stream] = state
            open[device] = session
            return closed
        }
        var position = start
        while position < samples.count {
            let take = min(rules.chunkSize - state.samples.count, samples.count - position)
            if shiftMs == 0 {
                state.samples.append(contentsOf: samples[position..<(position + take)])
            } else {
                for var sample in samples[position..<(position + take)] {
                    sample.timestampMs += shiftMs
                    state.samples.append(sample)
                }
            }
            position += take
            if state.samples.count == rules.chunkSize {
                closeChunk(&state, session: &session)
                closed = true
                let next = index + Int64(position - start)
                state = newStream(stream, next, session.record, odrHz, range, seq: state.chunk.seq + 1)
            }
        }
        let added = Int64(samples.count - start)
        state.nextIndex = index + added
        let lastMs = samples.last!.timestampMs + shiftMs
        state.lastMs = lastMs
        session.record.samples += added
        uncommittedSamples += added
        session.record.expected += added
        session.record.lastSampleMs = max(session.record.lastSampleMs ?? -.infinity, lastMs)
        session.lastArrivalMs = now()
        session.streams[stream] = state
        open[device] = session
        return closed
    }

    /// Records `samples` (indices from `index`) as a storeFull gap instead of keeping them, extending
    /// the stream's last gap when it is a storeFull gap that ends right before them.
    private func refuse(_ samples: ArraySlice<StoredSample>, shiftMs: Double, from index: Int64, stream: SensorStream,
                        state: inout StreamState, session: inout OpenSession) {
        let count = Int64(samples.count)
        let (first, last) = (samples.first!.timestampMs + shiftMs, samples.last!.timestampMs + shiftMs)
        let gap = GapRange(stream: stream.rawValue, fromIndex: index, toIndex: index + count - 1, fromMs: first, toMs: last,
                           missing: count, reason: .storeFull)
        if let previous = session.record.gaps.last, previous.stream == gap.stream, previous.reason == gap.reason,
           previous.toIndex + 1 == index {
            session.record.gaps[session.record.gaps.count - 1].extend(to: gap)
            if state.chunk.gaps.last == previous { state.chunk.gaps[state.chunk.gaps.count - 1].extend(to: gap) }
        } else {
            session.record.gaps.append(gap)
            state.chunk.gaps.append(gap)
            counters.gaps += 1
        }
        if state.samples.isEmpty { state.chunk.firstIndex = index + count }
        state.rowDirty = true
        state.nextIndex = index + count
        state.lastMs = last
        session.record.expected += count
        counters.missingSamples += count
        counters.storeFullSamples += count
        session.rowDirty = true
        session.lastArrivalMs = now()
    }

    private func gapRange(stream: SensorStream, state: StreamState, index: Int64, atMs: Double, odrHz: Double, reason: GapReason) -> GapRange {
        let missing = index - state.nextIndex
        let period = 1000 / odrHz
        let fromMs = state.lastMs.map { $0 + period } ?? atMs - Double(missing) * period
        return GapRange(stream: stream.rawValue, fromIndex: state.nextIndex, toIndex: index - 1,
                        fromMs: fromMs, toMs: atMs - period, missing: missing, reason: reason)
    }

    func newStream(_ stream: SensorStream, _ firstIndex: Int64, _ session: SessionRecord, _ odrHz: Double, _ range: Double, seq: Int? = nil) -> StreamState {
        let ids = stream == .gyro ? session.chunkIds : session.accelChunkIds
        let chunk = ChunkRecord(id: ChunkId.random(), sessionId: session.id, stream: stream.rawValue,
                                seq: seq ?? ids.count, odrHz: odrHz, range: range, firstIndex: firstIndex)
        return StreamState(chunk: chunk, capacity: rules.chunkSize)
    }

    /// Renders a full or final chunk into its document; its sample rows are dropped in the
    /// same commit that writes the document.
    func closeChunk(_ state: inout StreamState, session: inout OpenSession) {
        guard let first = state.samples.first, let last = state.samples.last else { return }
        state.chunk.count = state.samples.count
        state.chunk.startMs = first.timestampMs
        state.chunk.endMs = last.timestampMs
        state.chunk.isOpen = false
        let id = state.chunk.id
        if state.queued > 0 {
            pending.samples.removeAll { $0.chunkId == id }
            pending.closedChunkIds.append(id)
        }
        pending.chunks.append(state.chunk)
        if let path = try? DocumentPaths.chunk(id) {
            let body = renderer.chunk(state.chunk, session: session.record, samples: state.samples[...])
            pending.documents.append(DocumentWrite(path: path, body: body, retain: rules.retainChunks, device: session.record.device))
        }
        if state.chunk.stream == SensorStream.gyro.rawValue { session.record.chunkIds.append(id) } else { session.record.accelChunkIds.append(id) }
        session.documentsStale = true
        session.rowDirty = true
        counters.chunksClosed += 1
    }
}
