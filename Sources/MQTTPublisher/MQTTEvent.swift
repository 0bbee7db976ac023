/// Everything the publisher reacts to, delivered through one `AsyncStream` in the order it
/// happened: libmosquitto's callbacks (from its network thread) and the publisher's own
/// wake-ups (new outbox rows, resync, timers, shutdown).
///
/// Events of a connection carry its `generation`; events of a connection that has since
/// been torn down are ignored.
import GyroStore

enum MQTTEvent: Sendable {
    /// Opening the socket (TCP, TLS, CONNECT) failed before any callback could run.
    case openFailed(generation: Int, error: MQTTError)
    /// The network loop ended by itself (connection lost, TLS or protocol error).
    case loopEnded(generation: Int, error: MQTTError)
    /// An error libmosquitto logged (OpenSSL's reason for a TLS failure), kept for the next error.
    case libraryError(generation: Int, message: String)
    /// CONNACK: `reason` 0 is success (a v5 reason code, or a v3.1.1 return code).
    case connected(generation: Int, reason: Int32, sessionPresent: Bool)
    /// The connection is gone; `reason` is a v5 reason code (>= 128) or a `MOSQ_ERR_*` value.
    case disconnected(generation: Int, reason: Int32)
    /// The connection's `DeliveryWindow` has outcomes (PUBACKs) to `take()`.
    case windowProgress(generation: Int)
    case outboxChanged
    /// A batch of acknowledged rows was removed from the store.
    case acknowledgedRemoved
    /// A feeder's pass over the outbox ended (`nil`: the read failed).
    case page(epoch: Int, outboxVersion: Int, pass: OutboxPass?)
    case resync
    case reconnectDue(generation: Int)
    /// No CONNACK in time for this connection.
    case connectTimeout(generation: Int)
    /// On a fallback broker: time to try the earlier ones (`failbackInterval`).
    case failbackDue(generation: Int)
    /// The first earlier broker that accepted a TCP connection, or nil.
    case failbackProbed(generation: Int, index: Int?)
    /// Going back: the publishes in flight were not all acknowledged in time.
    case failbackTimeout(generation: Int)
    case shutdown
    case shutdownTimeout
}
