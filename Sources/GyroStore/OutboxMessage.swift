/// One publish the broker has not acknowledged yet, with its payload resolved from the
/// document version it refers to.
public struct OutboxMessage: Sendable, Equatable {
    /// Monotonically increasing; publishing in `seq` order keeps each device's documents in order.
    public var seq: Int64
    /// The document path; the publisher adds the configured prefix.
    public var topic: String
    public var qos: Int
    public var retain: Bool
    public var payload: [UInt8]
    /// Extra MQTT v5 properties as JSON (for example a message expiry), if any.
    public var properties: String?
    public var device: String?
    public var createdAt: Double

    public init(seq: Int64, topic: String, qos: Int, retain: Bool, payload: [UInt8],
                properties: String? = nil, device: String? = nil, createdAt: Double) {
        self.seq = seq
        self.topic = topic
        self.qos = qos
        self.retain = retain
        self.payload = payload
        self.properties = properties
        self.device = device
        self.createdAt = createdAt
    }
}

/// An outbox row handed over while the store reads it (`GyroStore.deliverOutbox`).
public struct OutboxRowView {
    public let seq: Int64
    /// The document path; the publisher adds the configured prefix.
    public let topic: String
    public let qos: Int
    public let retain: Bool
    /// Extra MQTT v5 properties as JSON, if any.
    public let properties: String?
    public let device: String?
    public let createdAt: Double
    /// Valid only during the `deliver` call that received it.
    public let payload: UnsafeRawBufferPointer
}

/// What one `GyroStore.deliverOutbox` pass did.
public struct OutboxPass: Sendable, Equatable {
    /// Rows `deliver` accepted.
    public var delivered = 0
    /// The last seq passed: accepted, or superseded (and removed); nil when there was none.
    public var lastSeq: Int64?
    /// `deliver` declined a row: that row and the ones after it were not passed.
    public var stopped = false
    /// The pass ended at its `limit`: rows may follow. When false (and not `stopped`), the
    /// pass saw every row its snapshot had, so a publisher knows it is drained without reading
    /// again (another thread wake-up and read transaction per commit).
    public var limited = false

    public init() {}
}

/// How much is waiting for the broker.
public struct OutboxStats: Sendable, Equatable, Codable {
    public var depth: Int
    public var bytes: Int
    /// Epoch seconds of the oldest unacknowledged row, `nil` when empty.
    public var oldestCreatedAt: Double?
    /// Rows the broker refused repeatedly, kept but not sent (`GyroStore.retryParked()`).
    public var parked: Int = 0
    /// The broker's reason for the most recently parked row.
    public var lastParkedReason: String?
}
