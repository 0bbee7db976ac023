/// How samples become sessions, chunks and commits.
public struct CaptureRules: Sendable {
    /// Points per chunk document.
    public var chunkSize: Int
    /// Longest time a sample waits in memory before it is committed; what a crash can lose.
    public var commitInterval: Duration
    /// Start a session when samples arrive for a sensor that has none.
    public var autoStart: Bool
    /// Close a session when its sensor has sent nothing for this long (ms).
    public var idleTimeoutMs: Double
    /// Split a session at this length (ms).
    public var maxDurationMs: Double
    public var retainChunks: Bool
    /// While the disk is full and commits fail, at most this many samples wait in memory for the
    /// next try; later ones become `storeFull` gaps of their sessions at once (bounded memory).
    public var fullBufferSamples: Int
    /// Devices (upper case) whose every gap starts a new chunk: a backfill can fill a gap with new
    /// chunks of its own, before that chunk's samples and after the previous chunk's, when the
    /// gap's chunk has no room (`GyroStore.backfill(device:stream:samples:chunkSize:sessionDocuments:chunkDocument:newChunk:newChunkDocument:)`).
    public var newChunkAtGap: Set<String> = []
    /// An open session's records and DailySessions documents are rewritten for closed chunks at
    /// most this often, and less often as the record grows (``documentPace(bytes:)``); at once for
    /// a start, an end, hazards, a re-dating. See docs/durability.md, "Session age".
    public var documentInterval: Duration = .seconds(5)
    /// The record bytes a second an open session's rewrites may cost at most.
    public var documentBytesPerSecond = 2048

    public init(chunkSize: Int = 2000, commitInterval: Duration = .seconds(1), autoStart: Bool = true,
                idleTimeoutMs: Double = 300_000, maxDurationMs: Double = 4 * 3_600_000, retainChunks: Bool = false) {
        self.chunkSize = chunkSize
        fullBufferSamples = 2 * chunkSize
        self.commitInterval = commitInterval
        self.autoStart = autoStart
        self.idleTimeoutMs = idleTimeoutMs
        self.maxDurationMs = maxDurationMs
        self.retainChunks = retainChunks
    }
}

extension CaptureRules {
    /// How long after its last rewrite an open session's documents may be rewritten for the
    /// chunks closed since, when the last record body was `bytes` long.
    ///
    /// Why it grows with the record: the record lists every chunk (about 39 bytes each), so
    /// rewriting it at a fixed rate would cost each sample more the older its session is, on the
    /// card and over MQTT; paced by its size, a session's record bytes a second stay bounded by
    /// `documentBytesPerSecond` whatever its age.
    public func documentPace(bytes: Int) -> Duration {
        let sized = Duration.milliseconds(Int64(bytes) * 1000 / Int64(max(1, documentBytesPerSecond)))
        return max(documentInterval, sized)
    }
}

/// Why samples did not become stored samples: each is counted, none is silent.
public struct CaptureCounters: Sendable, Equatable, Codable {
    /// Samples in transactions that committed.
    public var committedSamples: Int64 = 0
    /// Samples whose index had already been stored (a re-sent notification).
    public var duplicateSamples: Int64 = 0
    /// Samples for a sensor with no session while auto-start is off.
    public var samplesWithoutSession: Int64 = 0
    public var missingSamples: Int64 = 0
    /// Gaps recorded (each a run of missing samples).
    public var gaps: Int64 = 0
    public var commits: Int64 = 0
    public var failedCommits: Int64 = 0
    public var chunksClosed: Int64 = 0
    public var sessionsStarted: Int64 = 0
    public var sessionsClosed: Int64 = 0
    /// Sessions continued here after another gateway of a fleet (or this one) released them.
    public var sessionsAdopted: Int64 = 0
    /// Samples stored into gaps from the sensors' own logs.
    public var backfilledSamples: Int64 = 0
    /// Samples not kept because the disk was full (recorded as `storeFull` gaps when they arrived).
    public var storeFullSamples: Int64 = 0
    /// Times the store became full: a commit failed for want of space, or retention evicted unpublished data because the disk had no room.
    public var storeFullEpisodes: Int64 = 0
    /// Sessions found open after a crash without a single sample, and so withdrawn (see ``CaptureEngine/recover(continuing:)``).
    public var sessionsWithdrawn: Int64 = 0
    /// Re-datings applied (``CaptureEngine/redate(_:)``) and the sessions they moved.
    public var redatings: Int64 = 0
    public var redatedSessions: Int64 = 0

    public init() {}
}

/// Errors of the session API.
public enum CaptureError: Error, CustomStringConvertible, Sendable {
    case unknownSession(String)
    case noSessionForDevice(String)
    case invalidHazard(name: String, reason: String)
    /// A document the engine reads back (a user's medals) is damaged in the store.
    case unreadableDocument(path: String, reason: String)

    public var description: String {
        switch self {
        case .unknownSession(let id): "capture: there is no session \"\(id)\""
        case .noSessionForDevice(let device): "capture: sensor \(device) has no open session"
        case .invalidHazard(let name, let reason): "capture: hazard \"\(name)\": \(reason)"
        case .unreadableDocument(let path, let reason): "capture: the stored document \(path) is \(reason)"
        }
    }
}
