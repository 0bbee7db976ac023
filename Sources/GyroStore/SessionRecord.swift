import FoundationEssentials
import HostTime

/// A capture session: one sensor, one user, from start to end. Its id is the `records`
/// document id, `{userId}___{start epoch seconds}`, assigned once.
public struct SessionRecord: Sendable, Equatable {
    public var id: String
    public var userId: String
    public var device: String
    public var startMs: Double
    /// `nil` while the session is open.
    public var endMs: Double?
    public var lastSampleMs: Double?
    /// Samples stored, over all streams.
    public var samples: Int64
    /// Samples the sensor should have sent: stored plus missing.
    public var expected: Int64
    public var hazards: [String: Int]
    /// `realtime_data` ids of the gyroscope chunks, in order (the record's `gscope_data`).
    /// Not stored in the session's row: read from the chunk table (``GyroStore`` says which reads
    /// leave them out).
    public var chunkIds: [String]
    public var accelChunkIds: [String]
    /// Chunks the store lists for the session that a summary read left out of the two lists.
    var unreadChunks = 0
    public var gaps: [GapRange]
    public var isOpen: Bool
    /// The local calendar day (`yyyy-MM-dd`) the session started on, in the gateway's zone.
    public var localDate: String
    /// How its times are dated; `nil` for a session stored by a gateway that did not say.
    public var dating: Dating?

    public init(id: String, userId: String, device: String, startMs: Double, localDate: String) {
        self.id = id
        self.userId = userId
        self.device = device
        self.startMs = startMs
        self.endMs = nil
        self.lastSampleMs = nil
        self.samples = 0
        self.expected = 0
        self.hazards = [:]
        self.chunkIds = []
        self.accelChunkIds = []
        self.gaps = []
        self.isOpen = true
        self.localDate = localDate
        self.dating = nil
    }

    /// How many chunk documents the session lists, `gscope_data` and `accel_data` together; also
    /// right for a summary read, whose lists are left empty.
    public var chunkCount: Int { chunkIds.count + accelChunkIds.count + unreadChunks }

    /// Milliseconds from start to end (or to the last sample while open).
    public var durationMs: Double { max(0, (endMs ?? lastSampleMs ?? startMs) - startMs) }
}
