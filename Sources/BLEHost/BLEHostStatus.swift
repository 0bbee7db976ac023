import BluetoothWire

/// A snapshot of a ``BLEHost``: controller state, connections and counters.
public struct BLEHostStatus: Sendable, Equatable {
    public enum ControllerState: String, Sendable, Equatable {
        case idle, starting, ready, stopped, failed
    }

    public struct Connection: Sendable, Equatable {
        public var handle: UInt16
        public var peer: BluetoothAddress
        public var peerAddressType: BluetoothAddressType
        /// Interval in ms, latency in events, supervision timeout in ms (as last reported by the controller).
        public var intervalMs: Double
        public var latency: UInt16
        public var supervisionTimeoutMs: Double
        /// ACL packets sent on this handle not yet completed by the controller.
        public var aclInFlight: Int
        /// ACL packets waiting for a controller buffer.
        public var aclQueued: Int
        /// The ATT_MTU in use on this link.
        public var attMTU: UInt16
        /// Notifications and indications received on this link.
        public var notificationsReceived: Int
        /// ATT PDUs from the peer that were malformed or unexpected (dropped).
        public var attDropped: Int
    }

    public var state: ControllerState
    /// The controller's public address (Read BD_ADDR), when known.
    public var controllerAddress: BluetoothAddress?
    /// The random address in use, when the own address type is random.
    public var randomAddress: BluetoothAddress?
    /// LE ACL buffer size and count, as read at start.
    public var aclBufferSize: Int
    public var aclBufferCount: Int
    /// Controller buffers free now.
    public var aclBuffersAvailable: Int
    public var connections: [Connection]
    /// Whether a scan or a connection attempt is in progress.
    public var isScanning: Bool
    public var isConnecting: Bool

    // Counters, cumulative since init.
    public var eventsReceived: Int
    public var aclPacketsReceived: Int
    public var aclPacketsSent: Int
    /// Packets that failed to decode (bad length, truncated fields), dropped.
    public var malformedPackets: Int
    /// Packets understood but not expected (unknown events, unknown handles, stray responses), dropped.
    public var unknownPackets: Int
    public var commandTimeouts: Int
    /// Reassembly drops (fragments out of order, frames over the limit).
    public var reassemblyErrors: Int
    /// Number Of Completed Packets that did not match what was sent.
    public var creditAnomalies: Int
    public var connectionsOpened: Int
    public var connectionsClosed: Int
    /// Peer connection parameter requests answered with accept / reject.
    public var parameterRequestsAccepted: Int
    public var parameterRequestsRejected: Int
}
