import FoundationEssentials

/// A snapshot of the publisher for the admin API and tests.
public struct PublisherStatus: Sendable, Equatable, Codable {
    public enum State: String, Sendable, Codable {
        case connecting, connected, waitingToReconnect, stopping, stopped
    }

    public var state: State = .connecting
    /// When the current broker connection was accepted; `nil` while not connected.
    public var connectedSince: Date?
    /// The last connection or publish problem, with the broker's reason; kept after recovery.
    public var lastError: MQTTError.Snapshot?
    public var protocolVersion: String = "5"
    /// The broker connected to, or being tried (`host:port`).
    public var broker: String?
    /// Times the gateway moved to another broker of `mqtt.hosts` (failover or back).
    public var failovers: Int = 0
    /// Broker connections accepted since start.
    public var connections: Int = 0
    /// Connection attempts that failed (refused, unreachable, TLS) or connections lost.
    public var connectionFailures: Int = 0
    /// Connections that found no session on the broker, so retained documents were re-sent.
    public var resyncs: Int = 0
    /// Outbox rows handed to libmosquitto (resends count again).
    public var published: Int = 0
    /// Outbox rows the broker acknowledged (removed from the outbox).
    public var acknowledged: Int = 0
    /// Publishes the broker refused (PUBACK reason >= 128); those rows stay in the outbox.
    public var rejected: Int = 0
    public var inFlight: Int = 0

    public init() {}
}

extension MQTTError {
    /// The error as shown in `PublisherStatus`.
    public struct Snapshot: Sendable, Equatable, Codable, CustomStringConvertible {
        public var kind: String
        public var message: String
        public var code: Int32
        public var at: Date
        public var description: String { "\(kind): \(message) (\(code))" }
    }

    var snapshot: Snapshot { Snapshot(kind: kind.rawValue, message: message, code: code, at: Date()) }
}
