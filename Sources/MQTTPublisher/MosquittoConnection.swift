import CMosquitto
import Dispatch
import GatewayConfig
import Glibc
import PosixThreads

/// One libmosquitto handle for one connection attempt; a reconnect makes a new one.
///
/// Why one handle per attempt: libmosquitto's own reconnect loop (`mosquitto_loop_forever`)
/// gives up for good on TLS and protocol errors, and keeps QoS 1 messages published while
/// disconnected in an unbounded in-memory queue. A fresh handle per attempt keeps every retry
/// in our hands (backoff with jitter, v5 to 3.1.1 fallback) and drops that queue with the
/// handle: the store's outbox is what gets resent.
///
/// Threading: each connection has one thread of its own: it opens the socket (blocking: DNS,
/// TCP, TLS handshake, CONNECT), then runs `mosquitto_loop` until closed. Callbacks run on
/// that network thread and only `yield` into the publisher's event stream, in the order they ran.
/// Publishes go through `window`, from the actor or from the PUBACK callback (libmosquitto
/// locks internally; the window's own mutex orders the two).
/// `close()` blocks until the network thread has stopped and must not run on it.
final class MosquittoConnection: @unchecked Sendable {
    /// The callbacks' userdata: retained until the handle is destroyed.
    final class Context: Sendable {
        let generation: Int
        let continuation: AsyncStream<MQTTEvent>.Continuation
        /// Set once, right after the handle exists (before any callback can run).
        nonisolated(unsafe) var window: DeliveryWindow?
        init(generation: Int, continuation: AsyncStream<MQTTEvent>.Continuation) {
            self.generation = generation
            self.continuation = continuation
        }
    }

    static let libraryReady: Bool = { mosquitto_lib_init() == Int32(MOSQ_ERR_SUCCESS.rawValue) }()

    let handle: OpaquePointer
    let context: Unmanaged<Context>
    /// This connection's publishes in flight and the rows queued behind them.
    let window: DeliveryWindow
    let v5: Bool
    let generation: Int
    /// Entered while the connection's thread runs.
    private let running = DispatchGroup()
    private let closing = LockedState(false)

    init?(configuration: PublisherConfiguration, v5: Bool, generation: Int, continuation: AsyncStream<MQTTEvent>.Continuation) {
        _ = Self.libraryReady
        let context = Unmanaged.passRetained(Context(generation: generation, continuation: continuation))
        // clean_session false: the broker keeps our session (with a v5 session expiry interval).
        guard let handle = mosquitto_new(configuration.clientId, false, context.toOpaque()) else {
            context.release()
            return nil
        }
        self.handle = handle
        self.context = context
        window = DeliveryWindow(handle: handle, v5: v5, configuration: configuration)
        context.takeUnretainedValue().window = window
        self.v5 = v5
        self.generation = generation
        mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311)
        // Effectively off: a dropped connection is replaced by a new handle, never retried here.
        // We run the network loop ourselves (see `open`); libmosquitto must lock and wake it.
        mosquitto_threaded_set(handle, true)
        installCallbacks()
    }

    private func installCallbacks() {
        mosquitto_connect_v5_callback_set(handle) { _, userdata, rc, flags, _ in
            let context = Unmanaged<Context>.fromOpaque(userdata!).takeUnretainedValue()
            context.continuation.yield(.connected(generation: context.generation, reason: rc, sessionPresent: flags & 1 != 0))
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, userdata, rc, _ in
            let context = Unmanaged<Context>.fromOpaque(userdata!).takeUnretainedValue()
            context.continuation.yield(.disconnected(generation: context.generation, reason: rc))
        }
        // libmosquitto logs OpenSSL's reason ("certificate verify failed") only here.
        mosquitto_log_callback_set(handle) { _, userdata, level, message in
            guard level & MOSQ_LOG_ERR != 0, let message else { return }
            let context = Unmanaged<Context>.fromOpaque(userdata!).takeUnretainedValue()
            context.continuation.yield(.libraryError(generation: context.generation, message: String(cString: message)))
        }
        // The window publishes the next queued row from here; the actor is woken for the outcomes.
        mosquitto_publish_v5_callback_set(handle) { _, userdata, mid, reason, _ in
            let context = Unmanaged<Context>.fromOpaque(userdata!).takeUnretainedValue()
            if context.window?.completed(mid: mid, reason: reason) == true {
                context.continuation.yield(.windowProgress(generation: context.generation))
            }
        }
    }

    /// Credentials, TLS files and the last will. Returns an error for bad TLS files.
    func configure(_ configuration: PublisherConfiguration, will: (topic: String, payload: [UInt8])) -> MQTTError? {
        if let error = Self.applyCredentials(handle, configuration) { return error }
        let rc = will.payload.withUnsafeBytes { bytes in
            mosquitto_will_set(handle, will.topic, Int32(bytes.count), bytes.baseAddress, 1, true)
        }
        if rc != Int32(MOSQ_ERR_SUCCESS.rawValue) {
            return MQTTError(kind: .refused, message: "last will rejected: \(String(cString: mosquitto_strerror(rc)))", code: rc)
        }
        return nil
    }

    /// Sets the user name, password and TLS files of `configuration` on `handle` (shared with
    /// ``BrokerProbe``). Returns an error for TLS files libmosquitto cannot use.
    static func applyCredentials(_ handle: OpaquePointer, _ configuration: PublisherConfiguration) -> MQTTError? {
        if let username = configuration.username {
            mosquitto_username_pw_set(handle, username, configuration.password)
        }
        if let tls = configuration.tls {
            let rc = mosquitto_tls_set(handle, tls.caFile, nil, tls.certFile, tls.keyFile, nil)
            if rc != Int32(MOSQ_ERR_SUCCESS.rawValue) {
                return MQTTError(kind: .tls, message: "TLS files not usable (CA \(tls.caFile)): \(String(cString: mosquitto_strerror(rc)))", code: rc)
            }
        }
        return nil
    }

    /// On a thread of its own: opens the socket and sends CONNECT (blocking: DNS, TCP, TLS),
    /// then runs the network loop until `close()`. A failed open is reported as `.openFailed`,
    /// a loop that ends by itself (connection lost, TLS failure after the handshake started)
    /// as `.loopEnded`; CONNACK arrives as `.connected`.
    ///
    /// Why not `mosquitto_loop_start`: its `mosquitto_loop_forever` returns silently on TLS and
    /// protocol errors (no callback), which left the publisher waiting for a CONNACK that never
    /// came. Running `mosquitto_loop` here (with `mosquitto_threaded_set`) reports every end.
    func open(_ configuration: PublisherConfiguration, broker: BrokerEndpoint) {
        running.enter()
        let started = DetachedThread.start(name: "mqtt-\(generation)") { [self] in
            defer { running.leave() }
            var properties: OpaquePointer?
            if v5 { mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), configuration.sessionExpirySeconds) }
            let rc = mosquitto_connect_bind_v5(handle, broker.host, Int32(broker.port), Int32(configuration.keepaliveSeconds), nil, properties)
            let savedErrno = errno
            mosquitto_property_free_all(&properties)
            let events = context.takeUnretainedValue().continuation
            guard rc == Int32(MOSQ_ERR_SUCCESS.rawValue) else {
                events.yield(.openFailed(generation: generation, error: .call(rc, errno: savedErrno)))
                return
            }
            let idleTimeoutMs = Int32(clamping: max(1, configuration.keepaliveSeconds) * 1000)
            var closingRounds = 0
            while true {
                // Wakes up at once when a packet is queued or `close()` disconnects (libmosquitto's
                // socket pair) and when the broker sends something. With nothing to do it waits for
                // the keep-alive: libmosquitto shortens the wait to when the next PINGREQ is due
                // (`next_msg_out`, one keep-alive after the last packet sent). A shorter timeout
                // only woke this thread every time it ran out, for nothing.
                let rc = mosquitto_loop(handle, isClosing ? Self.closingPollMs : idleTimeoutMs, 1)
                let savedErrno = errno
                if isClosing {
                    closingRounds += 1
                    if rc != Int32(MOSQ_ERR_SUCCESS.rawValue) || mosquitto_socket(handle) < 0 || closingRounds > 5 { return }
                } else if rc != Int32(MOSQ_ERR_SUCCESS.rawValue) {
                    events.yield(.loopEnded(generation: generation, error: .call(rc, errno: savedErrno)))
                    return
                }
            }
        }
        if !started {
            running.leave()
            let events = context.takeUnretainedValue().continuation
            events.yield(.openFailed(generation: generation, error: .call(Int32(MOSQ_ERR_ERRNO.rawValue), errno: EAGAIN)))
        }
    }

    private var isClosing: Bool { closing.withLock { $0 } }

    /// How long a closing loop waits per round (at most 5) for what is queued and DISCONNECT to
    /// go out and the socket to close.
    private static let closingPollMs: Int32 = 1000

    /// Sends DISCONNECT if connected (so the broker does not send the will), waits for the
    /// connection's thread to end and frees the handle. Blocking: call it off the actor
    /// (see `closeInBackground`).
    func close() {
        let first: Bool = closing.withLock { closing in
            defer { closing = true }
            return !closing
        }
        guard first else { return }
        mosquitto_disconnect(handle)
        running.wait()
        mosquitto_destroy(handle)
        context.release()
    }

    /// `close()` on a thread of its own; `done` runs after.
    func closeInBackground(_ done: @escaping @Sendable () -> Void = {}) {
        let started = DetachedThread.start(name: "mqtt-close") { [self] in
            close()
            done()
        }
        // Without a thread of its own, close here: blocking the caller beats leaking the handle.
        if !started {
            close()
            done()
        }
    }
}
