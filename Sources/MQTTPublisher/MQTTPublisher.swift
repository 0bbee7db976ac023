// MQTTPublisher: drains the store's outbox to an MQTT broker through libmosquitto.
//
// Threading model
// - The `MQTTPublisher` actor owns all state. Its `run()` is the only consumer of one
//   `AsyncStream<MQTTEvent>`, and handles each event to completion before the next, so the
//   state machine is never re-entered by its own events (other callers only read `status`).
// - Each connection runs on a network thread of its own (`MosquittoConnection.open`: connect,
//   then `mosquitto_loop`, like `mosquitto_loop_start` but reporting how the loop ended).
//   The C callbacks find their `MosquittoConnection.Context` through `Unmanaged` userdata and
//   only `yield` into the stream's single continuation: CONNACK, PUBACKs and disconnects
//   arrive in the order libmosquitto saw them (no `Task` per callback, which could reorder).
// - `outboxChanged()`, `resync()` and `shutdown()` are nonisolated and also just `yield`.
// - Blocking libmosquitto calls (connect with its TLS handshake, disconnect + loop_stop)
//   run on threads of their own, never on the actor or the cooperative pool.
//
// Delivery
// - The SQLite outbox is the source of truth. At most `inFlightWindow` publishes are handed
//   to libmosquitto; a row is deleted after its PUBACK (QoS 1) or once written (QoS 0).
// - Every new connection resends from the first unacknowledged row (at-least-once, in seq
//   order); a row superseded by a newer version of its document is dropped by the store,
//   so a subscriber never sees an older version after a newer one.
// - A broker session that is new (CONNACK session-present = 0) lost our retained documents
//   (or is a fresh broker): they are re-asserted from `store.retainedDocuments()` first.
import CMosquitto
import Foundation
import GyroStore
import Logging

public actor MQTTPublisher {
    let store: GyroStore
    let configuration: PublisherConfiguration
    var logger: Logger
    let startedAt = Date()
    let events: AsyncStream<MQTTEvent>
    let continuation: AsyncStream<MQTTEvent>.Continuation

    enum Phase: Equatable { case running, draining, goingOffline(mid: Int32), stopped }
    enum Flight { case outbox(seq: Int64, qos: Int), resync, presence }

    var phase = Phase.running
    var connection: MosquittoConnection?
    var generation = 0
    var useV5 = true
    var connected = false
    var failedAttempts = 0
    /// The last error libmosquitto logged on the current connection.
    var libraryError: String?
    /// Last outbox seq handed to libmosquitto on this connection.
    var cursor: Int64 = 0
    /// Rows fetched after `cursor`, not yet handed over.
    var buffered: [OutboxMessage] = []
    /// Retained documents still to re-assert on this connection.
    var resyncQueue: [OutboxMessage] = []
    var inFlight: [Int32: Flight] = [:]
    /// Windowed publishes (outbox and resync) in `inFlight`.
    var windowed = 0
    /// Acknowledged rows not yet removed from the store (removed in batches).
    var acked: [Int64] = []
    /// Rows the broker refused: kept in the outbox, retried on the next connection.
    var refused: Set<Int64> = []
    var timers: [Task<Void, Never>] = []
    public internal(set) var status = PublisherStatus()

    public init(store: GyroStore, configuration: PublisherConfiguration, logger: Logger) {
        self.store = store
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "subsystem"] = "mqtt"
        self.logger = logger
        (events, continuation) = AsyncStream.makeStream(of: MQTTEvent.self, bufferingPolicy: .unbounded)
    }

    // MARK: - API

    /// The store has new outbox rows: wake the drain loop. Cheap; call after every commit.
    public nonisolated func outboxChanged() { continuation.yield(.outboxChanged) }

    /// Re-asserts every retained document (as after a broker lost its retained store).
    public nonisolated func resync() { continuation.yield(.resync) }

    /// Graceful stop: no new rows, wait briefly for PUBACKs, publish "offline", disconnect.
    /// `run()` returns when done.
    public nonisolated func shutdown() { continuation.yield(.shutdown) }

    /// Connects and publishes until `shutdown()` (or cancellation). Call once.
    public func run() async {
        connect()
        for await event in events {
            await handle(event)
            if phase == .stopped { break }
        }
        await finish()
    }

    // MARK: - Events

    func handle(_ event: MQTTEvent) async {
        switch event {
        case .outboxChanged:
            await fill()
        case .resync:
            guard connected, phase == .running else { return }
            await startResync()
            await fill()
        case let .reconnectDue(generation):
            if generation == self.generation, connection == nil, phase == .running { connect() }
        case let .openFailed(generation, error), let .loopEnded(generation, error):
            guard generation == self.generation else { return }
            var error = error
            if let detail = libraryError, error.kind == .tls || error.kind == .connectionLost { error.message += " (\(detail))" }
            await connectionFailed(error)
        case let .libraryError(generation, message):
            guard generation == self.generation else { return }
            libraryError = message
            logger.debug("libmosquitto error", metadata: ["message": "\(message)"])
        case let .connected(generation, reason, sessionPresent):
            guard generation == self.generation else { return }
            if reason == 0 { await connectionAccepted(sessionPresent: sessionPresent) } else { await connectionRefused(reason) }
        case let .disconnected(generation, reason):
            guard generation == self.generation else { return }
            await connectionFailed(.disconnect(reason, beforeConnack: !connected))
        case let .published(generation, mid, reason):
            guard generation == self.generation else { return }
            await acknowledged(mid: mid, reason: reason)
        case .shutdown:
            await beginShutdown()
        case .shutdownTimeout:
            await shutdownTimedOut()
        }
    }

    // MARK: - Connection

    func connect() {
        generation += 1
        libraryError = nil
        status.state = .connecting
        status.protocolVersion = useV5 ? "5" : "3.1.1"
        guard let connection = MosquittoConnection(configuration: configuration, v5: useV5, generation: generation, continuation: continuation) else {
            continuation.yield(.openFailed(generation: generation, error: MQTTError(kind: .refused, message: "mosquitto_new failed", code: -1)))
            return
        }
        self.connection = connection
        if let error = connection.configure(configuration, will: (configuration.statusTopic, Array(#"{"state":"offline"}"#.utf8))) {
            continuation.yield(.openFailed(generation: generation, error: error))
            return
        }
        logger.debug("connecting", metadata: ["broker": "\(configuration.host):\(configuration.port)", "protocol": "\(status.protocolVersion)"])
        connection.open(configuration)
    }

    func connectionAccepted(sessionPresent: Bool) async {
        connected = true
        failedAttempts = 0
        status.state = phase == .running ? .connected : .stopping
        status.connectedSince = Date()
        status.connections += 1
        logger.info("connected to broker", metadata: ["broker": "\(configuration.host):\(configuration.port)",
                                                      "protocol": "\(status.protocolVersion)", "sessionPresent": "\(sessionPresent)"])
        resetDelivery()
        publishPresence(online: true)
        if !sessionPresent {
            status.resyncs += 1
            await startResync()
        }
        await fill()
    }

    func connectionRefused(_ reason: Int32) async {
        let error = MQTTError.connack(reason, v5: useV5)
        if error.kind == .unsupportedProtocol && useV5 {
            logger.warning("broker refused MQTT v5; falling back to 3.1.1", metadata: ["reason": "\(error)"])
            useV5 = false
            failedAttempts = 0
        }
        await connectionFailed(error)
    }

    /// Tears the connection down, keeps every unacknowledged row, and schedules a retry.
    func connectionFailed(_ error: MQTTError) async {
        let wasConnected = connected
        teardown()
        await flushAcks()
        record(error, level: wasConnected ? .warning : .error)
        if phase != .running {
            phase = .stopped
            return
        }
        failedAttempts += 1
        let delay = backoff(failedAttempts)
        status.state = .waitingToReconnect
        let generation = self.generation
        let continuation = self.continuation
        timers.append(Task {
            try? await Task.sleep(for: delay)
            continuation.yield(.reconnectDue(generation: generation))
        })
        timers.removeAll { $0.isCancelled }
        logger.debug("reconnecting after backoff", metadata: ["delay": "\(delay)", "attempt": "\(failedAttempts)"])
    }

    /// Capped exponential backoff with jitter: a random wait in the upper half of
    /// `min(maximum, minimum * 2^(attempt-1))`.
    func backoff(_ attempt: Int) -> Duration {
        let ceiling = min(configuration.reconnectMaximum, configuration.reconnectMinimum * (1 << min(attempt - 1, 20)))
        return ceiling * Double.random(in: 0.5...1.0)
    }

    func teardown() {
        connected = false
        status.connectedSince = nil
        connection?.closeInBackground()
        connection = nil
        generation += 1
        resetDelivery()
    }

    /// A new connection starts again from the first unacknowledged row.
    func resetDelivery() {
        cursor = 0
        buffered = []
        resyncQueue = []
        inFlight = [:]
        windowed = 0
        refused = []
        status.inFlight = 0
    }

    func record(_ error: MQTTError, level: Logger.Level) {
        status.lastError = error.snapshot
        status.connectionFailures += 1
        logger.log(level: level, "broker connection failed; will retry", metadata: [
            "broker": "\(configuration.host):\(configuration.port)", "error": "\(error)", "kind": "\(error.kind.rawValue)",
        ])
    }

    // MARK: - Presence

    func publishPresence(online: Bool) {
        guard let connection else { return }
        let body: String
        if online {
            let started = ISO8601DateFormatter().string(from: startedAt)
            body = #"{"state":"online","version":"\#(jsonEscaped(configuration.version))","startedAt":"\#(started)","sessions":\#(status.connections)}"#
        } else {
            body = #"{"state":"offline"}"#
        }
        let properties = MessageProperties.make(v5: connection.v5, gatewayId: configuration.gatewayId, path: nil, expiry: nil)
        defer { MessageProperties.free(properties) }
        let (rc, mid) = connection.publish(topic: configuration.statusTopic, payload: Array(body.utf8), qos: 1, retain: true, properties: properties)
        if rc == Int32(MOSQ_ERR_SUCCESS.rawValue) {
            inFlight[mid] = .presence
            if !online { phase = .goingOffline(mid: mid) }
        } else if !online {
            phase = .stopped
        }
    }

    func jsonEscaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }

    // MARK: - Shutdown

    func beginShutdown() async {
        guard phase == .running else { return }
        status.state = .stopping
        guard connected else {
            phase = .stopped
            return
        }
        phase = .draining
        logger.info("stopping: waiting for outstanding acknowledgements", metadata: ["inFlight": "\(windowed)"])
        scheduleShutdownTimeout()
        await shutdownProgress()
    }

    func scheduleShutdownTimeout() {
        let grace = configuration.shutdownGrace
        let continuation = self.continuation
        timers.append(Task {
            try? await Task.sleep(for: grace)
            continuation.yield(.shutdownTimeout)
        })
    }

    func shutdownProgress() async {
        guard phase == .draining, windowed == 0 else { return }
        await flushAcks()
        publishPresence(online: false)
        if case .goingOffline = phase { scheduleShutdownTimeout() }
    }

    func shutdownTimedOut() async {
        switch phase {
        case .draining:
            logger.warning("stopping with unacknowledged publishes; they stay in the outbox", metadata: ["inFlight": "\(windowed)"])
            windowed = 0
            await shutdownProgress()
        case .goingOffline:
            phase = .stopped
        default:
            break
        }
    }

    func finish() async {
        await flushAcks()
        for timer in timers { timer.cancel() }
        timers = []
        phase = .stopped
        connected = false
        status.state = .stopped
        status.connectedSince = nil
        status.inFlight = 0
        if let connection {
            // Clean DISCONNECT: the broker does not send the will (offline was published above).
            self.connection = nil
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in connection.closeInBackground { done.resume() } }
        }
        continuation.finish()
        logger.info("publisher stopped", metadata: ["published": "\(status.published)", "acknowledged": "\(status.acknowledged)"])
    }
}
