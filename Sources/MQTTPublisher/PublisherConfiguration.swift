import GatewayConfig

/// What the publisher needs to reach the broker; the daemon builds it from `MQTTSettings`.
public struct PublisherConfiguration: Sendable {
    public struct TLSFiles: Sendable {
        public var caFile: String
        public var certFile: String?
        public var keyFile: String?
        public init(caFile: String, certFile: String? = nil, keyFile: String? = nil) {
            self.caFile = caFile
            self.certFile = certFile
            self.keyFile = keyFile
        }
    }

    /// The preferred broker.
    public var host: String
    public var port: Int
    /// Brokers to fail over to, in order, when the one before cannot be reached.
    public var fallbackBrokers: [BrokerEndpoint] = []
    /// While on a fallback broker, how often the earlier ones are tried (TCP) to go back.
    public var failbackInterval: Duration = .seconds(30)
    public var clientId: String
    public var username: String?
    /// Never logged.
    public var password: String?
    public var tls: TLSFiles?
    /// Prepended to every document path (and to the presence topic).
    public var topicPrefix: String
    public var keepaliveSeconds: Int
    /// Names the gateway in the presence topic and in each message's user properties.
    public var gatewayId: String
    /// The gateway's version, shown in the presence document.
    public var version: String
    /// Most publishes handed to libmosquitto and not yet acknowledged. libmosquitto itself
    /// would queue without bound; 20 measured fastest on loopback (`docs/stack-facts.md`).
    public var inFlightWindow: Int = 20

    /// Outbox rows one feeder pass reads, in one read transaction, before the next pass starts:
    /// short enough that a checkpoint soon gets past its snapshot, long enough that starting
    /// a pass (a query, a task hop) is rare next to publishing its rows.
    var pageSize: Int { max(inFlightWindow * 2, 256) }
    /// A row the broker refuses this many times (PUBACK reason >= 128: an ACL, a quota) is
    /// parked: kept in the store but no longer sent, so it cannot hold up the rows behind it
    /// on every reconnect. `resync` retries parked rows.
    public var parkAfterRefusals: Int = 3
    /// v5 Session Expiry Interval: how long the broker keeps our session while we are away.
    public var sessionExpirySeconds: UInt32 = 7 * 24 * 3600
    /// v5 Message Expiry Interval for every publish, if set (a row's own value wins).
    public var messageExpirySeconds: UInt32?
    /// Reconnect backoff: doubles from `minimum` to `maximum`, each wait drawn from its upper half.
    public var reconnectMinimum: Duration = .milliseconds(500)
    public var reconnectMaximum: Duration = .seconds(30)
    /// How long a connection attempt may take (TCP, TLS, CONNACK) before it is abandoned.
    public var connectTimeout: Duration = .seconds(15)
    /// On shutdown: how long to wait for outstanding PUBACKs, then for the offline status.
    public var shutdownGrace: Duration = .seconds(3)

    public init(host: String, port: Int, clientId: String, gatewayId: String, version: String = "dev",
                username: String? = nil, password: String? = nil, tls: TLSFiles? = nil,
                topicPrefix: String = "", keepaliveSeconds: Int = 30) {
        self.host = host
        self.port = port
        self.clientId = clientId
        self.gatewayId = gatewayId
        self.version = version
        self.username = username
        self.password = password
        self.tls = tls
        self.topicPrefix = topicPrefix
        self.keepaliveSeconds = keepaliveSeconds
    }

    /// Every broker, the preferred one first.
    public var brokers: [BrokerEndpoint] { [BrokerEndpoint(host: host, port: port)] + fallbackBrokers }

    /// `gyrogate/{gatewayId}/status`: retained presence, last will "offline".
    public var statusPath: String { "gyrogate/\(gatewayId)/status" }
    /// `statusPath` under the topic prefix.
    public var statusTopic: String { topicPrefix + statusPath }
}
