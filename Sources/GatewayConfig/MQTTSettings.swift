/// How the publisher reaches the broker.
public struct MQTTSettings: Sendable, Equatable {
    /// The preferred broker (`mqtt.host`, or the first of `mqtt.hosts`).
    public var host: String
    public var port: Int
    /// The brokers after the preferred one (the rest of `mqtt.hosts`), in order: tried when the
    /// one before is unreachable; the gateway goes back to an earlier one once it answers.
    public var fallbackBrokers: [BrokerEndpoint] = []
    /// While on a fallback broker, how often an earlier one is tried.
    public var failbackSeconds: Int = 30
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

extension MQTTSettings {
    /// Every broker, the preferred one first.
    public var brokers: [BrokerEndpoint] { [BrokerEndpoint(host: host, port: port)] + fallbackBrokers }
}

/// One broker's address: `host:port`.
public struct BrokerEndpoint: Sendable, Equatable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// `host`, `host:port` or `[v6-address]:port`; nil when it is none of those.
    public init?(parsing text: String, defaultPort: Int) {
        var host = Substring(text), port = defaultPort
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let parsed = Int(rest.dropFirst()) else { return nil }
                port = parsed
            }
        } else if let colon = host.lastIndex(of: ":"), host.firstIndex(of: ":") == colon {
            guard let parsed = Int(host[host.index(after: colon)...]) else { return nil }
            port = parsed
            host = host[..<colon]
        } else if host.contains(":") {
            // Several colons and no brackets: an IPv6 address alone, with the default port.
            guard host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
        }
        guard !host.isEmpty, !host.contains(where: \.isWhitespace), (1...65535).contains(port) else { return nil }
        self.init(host: String(host), port: port)
    }
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
