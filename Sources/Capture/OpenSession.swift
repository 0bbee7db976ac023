import GyroStore

/// The in-memory side of an open session: what has not been committed yet.
struct OpenSession {
    init(record: SessionRecord, arrivalMs: Double) {
        self.record = record
        self.lastArrivalMs = arrivalMs
    }

    var record: SessionRecord
    var streams: [SensorStream: StreamState] = [:]
    /// The record and DailySessions documents must be rewritten at the next commit.
    var documentsDirty = true
    /// The documents lag behind the session (chunks closed since they were written): they are
    /// rewritten when ``CaptureRules/documentPace(bytes:)`` allows, or at once with anything
    /// that sets `documentsDirty`.
    var documentsStale = false
    /// When the documents were last queued, and the size of that record body.
    var documentsWrittenAt: ContinuousClock.Instant?
    var documentsBytes = 0
    /// The session row must be saved in full at the next commit.
    var rowDirty = true
    /// Host time (epoch ms) samples last arrived: idleness is measured on the host clock,
    /// since sample times may come from a board's clock or a log download.
    var lastArrivalMs: Double
}

/// One stream's current chunk. All of the chunk's samples stay in memory (at most
/// `chunkSize`), so closing it renders the document without reading the store.
struct StreamState {
    var chunk: ChunkRecord
    var samples: [StoredSample]
    /// How many of `samples` are already queued for, or in, the store.
    var queued: Int = 0
    /// The chunk's row must be written with the next samples queued: it is new, or its gaps
    /// changed. Its count and times are only written then and at its close: while it is open,
    /// its sample rows say how far it has come.
    var rowDirty = true
    /// The stream index the next sample should have.
    var nextIndex: Int64
    var lastMs: Double?

    init(chunk: ChunkRecord, capacity: Int) {
        self.chunk = chunk
        self.samples = []
        self.samples.reserveCapacity(capacity)
        self.nextIndex = chunk.firstIndex
    }
}
