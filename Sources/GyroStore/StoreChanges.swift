/// A document to write: its JSON body replaces the stored one, its version goes up by one,
/// and an outbox row referencing that version is added in the same transaction.
public struct DocumentWrite: Sendable {
    public var path: DocumentPath
    public var body: [UInt8]
    public var retain: Bool
    public var qos: Int
    /// Orders publishes per device; `nil` for documents that belong to no device.
    public var device: String?

    public init(path: DocumentPath, body: [UInt8], retain: Bool, qos: Int = 1, device: String?) {
        self.path = path
        self.body = body
        self.retain = retain
        self.qos = qos
        self.device = device
    }
}

/// Samples appended to an open chunk, at `offset` within it.
public struct SampleAppend: Sendable {
    public var chunkId: String
    public var offset: Int
    public var samples: ArraySlice<StoredSample>
    /// The stream's units per count, when its axes are counts times that: they are then stored
    /// as counts (``ChunkBody``).
    public var unitsPerLSB: Double?

    public init(chunkId: String, offset: Int, samples: ArraySlice<StoredSample>, unitsPerLSB: Double? = nil) {
        self.chunkId = chunkId
        self.offset = offset
        self.samples = samples
        self.unitsPerLSB = unitsPerLSB
    }
}

/// A session whose id changes (its start moved to another second when it was re-dated): its
/// chunks follow it, its old row goes; the new row is among the commit's sessions.
public struct SessionRename: Sendable, Equatable {
    public var from: String
    public var to: String

    public init(from: String, to: String) {
        self.from = from
        self.to = to
    }
}

/// When a board's power cycle began (epoch s), for the `boardResetTime` row.
public struct BoardResetTime: Sendable, Equatable {
    public var device: String
    public var resetUID: UInt8
    public var resetTime: Double

    public init(device: String, resetUID: UInt8, resetTime: Double) {
        self.device = device
        self.resetUID = resetUID
        self.resetTime = resetTime
    }
}

/// Everything one commit writes, applied in a single transaction so that a crash leaves
/// either all of it or none of it.
public struct StoreChanges: Sendable {
    /// Applied after `sessions` (which hold the renamed rows): the chunks move to the new ids.
    public var renames: [SessionRename] = []
    /// Session rows written in full.
    public var sessions: [SessionRecord] = []
    public var chunks: [ChunkRecord] = []
    public var samples: [SampleAppend] = []
    /// Chunks whose document was written in this commit: their `sampleBatch` rows (stores
    /// from before the sample ring) go, and their ring slots may be written again.
    public var closedChunkIds: [String] = []
    public var documents: [DocumentWrite] = []
    /// Documents removed locally and with a zero-byte retained publish.
    public var deletions: [DocumentPath] = []
    public var deletedSessionIds: [String] = []
    public var resetTimes: [BoardResetTime] = []
    /// Chunk lists sessions adopted from another gateway came with (written after `sessions`).
    public var inherited: [InheritedChunks] = []

    public init() {}

    public var isEmpty: Bool {
        renames.isEmpty && resetTimes.isEmpty && sessions.isEmpty && chunks.isEmpty && samples.isEmpty && closedChunkIds.isEmpty && documents.isEmpty
            && deletions.isEmpty && deletedSessionIds.isEmpty && inherited.isEmpty
    }

    /// Whether applying these changes adds outbox rows: each document written or deleted has one.
    public var addsOutboxRows: Bool { !documents.isEmpty || !deletions.isEmpty }

    public var sampleCount: Int { samples.reduce(0) { $0 + $1.samples.count } }

    /// Appends `later`'s changes, to apply them in one transaction after these.
    public mutating func append(_ later: StoreChanges) {
        renames += later.renames
        resetTimes += later.resetTimes
        sessions += later.sessions
        chunks += later.chunks
        samples += later.samples
        closedChunkIds += later.closedChunkIds
        documents += later.documents
        deletions += later.deletions
        deletedSessionIds += later.deletedSessionIds
        inherited += later.inherited
    }
}

/// The chunks a session listed when this gateway adopted it from another gateway of a fleet:
/// published there, listed here before the session's own (``SessionRecord/chunkIds``).
public struct InheritedChunks: Sendable, Equatable {
    public var sessionId: String
    public var gyro: [String]
    public var accelerometer: [String]
    /// The chunks among them that list a gap a backfill could still fill, with their documents
    /// (``CarriedChunk``): stored here so that this gateway can fill those gaps.
    public var carried: [CarriedChunk]

    public init(sessionId: String, gyro: [String], accelerometer: [String], carried: [CarriedChunk] = []) {
        self.sessionId = sessionId
        self.gyro = gyro
        self.accelerometer = accelerometer
        self.carried = carried
    }
}
