/// How the publisher reaches the broker.
public struct MQTTSettings: Sendable, Equatable {
    public var host: String
    public var port: Int
    public var clientId: String
    public var username: String?
    /// Read from `passwordFile` or the `GYROGATE_MQTT_PASSWORD` environment variable.
    public var password: Secret?
    public var tls: TLSSettings?
    /// Prepended to every document path; empty by default so topics are the Firestore paths.
    public var topicPrefix: String
    public var keepaliveSeconds: Int
    /// Chunk documents are not retained unless asked: they are a stream, not a state.
    public var retainChunks: Bool
    /// v5 Message Expiry Interval on every publish; 0: messages do not expire.
    public var messageExpirySeconds: Int = 0
    /// v5 Session Expiry Interval: how long the broker keeps the gateway's session (and the
    /// QoS 1 messages for it) while it is away.
    public var sessionExpirySeconds: Int = 604_800
}

public struct TLSSettings: Sendable, Equatable {
    public var caFile: String
    public var certFile: String?
    public var keyFile: String?
}

/// A value that never appears in logs or descriptions.
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public let value: String
    public init(_ value: String) { self.value = value }
    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }
}
