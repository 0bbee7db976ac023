// MQTTPublisher: drains the store's outbox to an MQTT broker through libmosquitto.
//
// Threading model
// - The `MQTTPublisher` actor owns the delivery state: connection lifecycle, store reads,
//   acknowledged rows awaiting removal, status. Its `run()` is the only consumer of one
//   `AsyncStream<MQTTEvent>` and handles each event to completion before the next, so the
//   state machine is never re-entered by its own events (other callers only read `status`).
// - The actor runs on the store writer's thread (`GyroStore.writerExecutor`), like the
//   capture engine: `outboxChanged()` after a commit is handled on the thread that committed,
//   and deleting acknowledged rows is a call on that thread, not a hop to it and back. `run()`
//   prefers that thread as its task executor too: the stream's consumer is resumed there by
//   an event, not on the global executor (a dispatch worker) that would then hop to it.
// - Each connection runs on a network thread of its own (`MosquittoConnection.open`: connect,
//   then `mosquitto_loop`, like `mosquitto_loop_start` but reporting how the loop ended).
//   The C callbacks find their `MosquittoConnection.Context` through `Unmanaged` userdata and
//   `yield` into the stream's single continuation, so CONNACK and disconnects arrive in the
//   order libmosquitto saw them (no `Task` per callback, which could reorder).
// - The one exception to "callbacks only yield": the connection's `DeliveryWindow`, a
//   lock-guarded window shared with the actor and the feeder. The feeder, a pass over the
//   outbox on the store's reader thread, publishes each row as soon as its body is read,
//   waiting there for room; the PUBACK callback records the outcome and makes room, and the
//   actor takes the outcomes in batches (`.windowProgress`).
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
// - Several brokers (`mqtt.hosts`): failover and back, `MQTTPublisher+Failover.swift`.
import CMosquitto
import FoundationEssentials
import GyroStore
import Logging
import PosixThreads

public actor MQTTPublisher {
    let store: GyroStore

    /// The store writer's thread (see the threading model above).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { store.writerExecutor.asUnownedSerialExecutor() }

    let configuration: PublisherConfiguration
    var logger: Logger
    let startedAt = Date()
    let events: AsyncStream<MQTTEvent>
    let continuation: AsyncStream<MQTTEvent>.Continuation

    enum Phase: Equatable { case running, draining, goingOffline(mid: Int32), stopped }

    var phase = Phase.running
    var connection: MosquittoConnection?
    var generation = 0
    var useV5 = true
    /// Which of `configuration.brokers` the current (or next) connection is for.
    var brokerIndex = 0
    /// The broker of the last accepted connection: a different one needs a resync.
    var lastAcceptedBroker: Int?
    /// Going back to this earlier broker once nothing is in flight.
    var failbackTarget: Int?
    var connected = false
    var failedAttempts = 0
    /// The last error libmosquitto logged on the current connection.
    var libraryError: String?
    /// Last seq the feeders passed on this connection (rows up to it are sent or superseded).
    var fetchCursor: Int64 = 0
    /// A feeder's pass is under way.
    var fetching = false
    /// Changes when delivery restarts: a feeder of an earlier one stops, its pass is dropped.
    var fetchEpoch = 0
    /// The last pass stopped without room in the window: the next waits for PUBACKs.
    var stalled = false
    /// The last read found nothing and no commit was signalled since.
    var exhausted = false
    /// Counts `outboxChanged()` calls, to tell whether a commit raced an empty read.
    var outboxVersion = 0
    /// The window's state as of its last report: resync documents queued, publishes awaiting PUBACK.
    var queued = 0
    var windowed = 0
    /// The highest outbox seq handed to libmosquitto on this connection.
    var lastHandedSeq: Int64 = 0
    /// Acknowledged rows not yet removed from the store (removed in batches).
    var acked: [Int64] = []
    /// A batch of acknowledged rows is being removed.
    var removing = false
    /// Alarms of the writer's thread not yet rung (see `yield(_:after:)`).
    var timers: [(alarm: ThreadExecutor.Alarm, deadline: ContinuousClock.Instant)] = []
    /// Callers of `waitUntilIdle()`, resumed when nothing is left to send.
    var idleWaiters: [CheckedContinuation<Void, Never>] = []
    /// Callers of `waitUntilDelivered()`, with the last row each waits for.
    var deliveryWaiters: [(target: Int64, continuation: CheckedContinuation<Void, Never>)] = []
    /// The lowest outbox seq queued in the window or awaiting its PUBACK, as of its last report.
    var lowestPendingSeq: Int64?
    /// Callers of `publishDirect` awaiting their PUBACK, by message id on the current connection.
    var directWaiters: [Int32: CheckedContinuation<Bool, Never>] = [:]
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

    /// Re-asserts every retained document (as after a broker lost its retained store) and
    /// retries the rows parked after repeated refusals.
    public nonisolated func resync() { continuation.yield(.resync) }

    /// Graceful stop: no new rows, wait briefly for PUBACKs, publish "offline", disconnect.
    /// `run()` returns when done.
    public nonisolated func shutdown() { continuation.yield(.shutdown) }

    /// Returns once the outbox is drained on a live connection: every row read, sent and
    /// acknowledged (or refused by the broker), their removal committed, and no newer commit
    /// signalled by `outboxChanged()`. Also returns when the publisher stops.
    public func waitUntilIdle() async {
        guard !isIdle, phase != .stopped else { return }
        await withCheckedContinuation { idleWaiters.append($0) }
    }

    var isIdle: Bool {
        connected && exhausted && queued == 0 && windowed == 0 && acked.isEmpty && !removing
    }

    func resumeIdleWaiters(force: Bool = false) {
        resumeDeliveryWaiters(force: force)
        guard !idleWaiters.isEmpty, force || isIdle else { return }
        let waiters = idleWaiters
        idleWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    /// Connects and publishes until `shutdown()` (or cancellation). Call once.
    public func run() async {
        await withTaskExecutorPreference(store.writerExecutor) {
            connect()
            for await event in events {
                await handle(event)
                if phase == .stopped { break }
            }
            await finish()
        }
    }

    // MARK: - Events

    func handle(_ event: MQTTEvent) async {
        switch event {
        case .outboxChanged:
            outboxVersion &+= 1
            exhausted = false
            await fill()
        case .acknowledgedRemoved:
            removing = false
            await fill()
        case let .page(epoch, version, pass):
            await pageArrived(epoch: epoch, outboxVersion: version, pass: pass)
        case .resync:
            guard phase == .running else { return }
            if connected { await startResync() }
            await retryParkedRows()
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
        case let .windowProgress(generation):
            guard generation == self.generation, let connection else { return }
            await apply(connection.window.take())
            await failbackProgress()
        case let .failbackDue(generation):
            probeEarlierBrokers(generation: generation)
        case let .failbackProbed(generation, index):
            await failbackProbed(generation: generation, index: index)
        case let .failbackTimeout(generation):
            await failbackTimedOut(generation: generation)
        case let .connectTimeout(generation):
            guard generation == self.generation, !connected else { return }
            await connectionFailed(MQTTError(kind: .unreachable, message: "no CONNACK within \(configuration.connectTimeout)", code: -1))
        case .shutdown:
            await beginShutdown()
        case .shutdownTimeout:
            await shutdownTimedOut()
        }
    }
}
