import CMosquitto
import GyroStore
import Synchronization

/// One connection's publishes in flight and the rows queued to follow them, shared by the
/// publisher actor (which reads rows from the store and offers them) and the connection's
/// network thread (whose PUBACK callback hands the next queued row to libmosquitto at once).
///
/// Why the window refills itself on the network thread: when every PUBACK went through the
/// actor before the next publish, each one waited for a task wake-up (0.4 ms on average in
/// `mqtt-bench`, with the reader, the network thread and the broker sharing two cores), and
/// the drain reached half of what a bare libmosquitto publisher does. Now the actor is off
/// that path: it keeps the queue stocked and handles the outcomes in batches (`take()`).
///
/// The actor is woken for a batch of outcomes (`wakeAfterOutcomes`), when the queue falls
/// below a page (it reads the next one), when the window empties (drained, or shutting down)
/// and for the presence document's PUBACK, not for every PUBACK: a task switch per message
/// was a good part of the fixed cost, which `mqtt-bench --points 10` (1 KB documents) measured
/// at 37-51 µs of CPU per document against a bare publisher's 16-23, and 30-45 µs batched.
///
/// All state is behind one mutex, held while calling `mosquitto_publish`, so a PUBACK can
/// never be handled before its message id is recorded. Lock order: libmosquitto's callback
/// mutex, then this one, then libmosquitto's message and packet mutexes (its publish calls).
final class DeliveryWindow: Sendable {
    enum Flight: Sendable {
        case outbox(seq: Int64, qos: Int)
        case resync
        case presence
    }

    /// What happened to a publish since the last `take()`.
    enum Outcome: Sendable {
        /// PUBACK (QoS 1) or handed over (QoS 0); `reason` >= 128 is a broker refusal.
        case outbox(seq: Int64, reason: Int32)
        case resync(reason: Int32)
        case presence(mid: Int32)
    }

    /// A snapshot for the actor, with the outcomes collected since the previous one.
    struct Report: Sendable {
        var outcomes: [Outcome] = []
        /// Outbox rows handed to libmosquitto since the previous report.
        var published = 0
        /// A publish libmosquitto would not take (the connection is failing); nothing more is
        /// handed over on this connection.
        var failure: MQTTError?
        /// Rows queued, waiting for room in the window.
        var queued = 0
        /// Windowed publishes (outbox and resync) awaiting their PUBACK.
        var inFlight = 0
        /// The highest outbox seq handed to libmosquitto on this connection.
        var lastHandedSeq: Int64 = 0
    }

    private struct Entry {
        let message: OutboxMessage
        let flight: Flight
    }

    private struct State {
        var queue: [Entry] = []
        var head = 0
        var inFlight: [Int32: Flight] = [:]
        var windowed = 0
        var report = Report()
        /// An actor wake-up (`onProgress`) is pending: further outcomes join it.
        var notified = false
        /// The actor was woken because the queue ran low; set again once rows are offered.
        var refillSignalled = false
        var halted = false

        var queued: Int { queue.count - head }

        mutating func popFirst() -> Entry? {
            guard head < queue.count else { return nil }
            let entry = queue[head]
            head += 1
            if head > 64, head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
            return entry
        }
    }

    private let state = Mutex(State())
    /// libmosquitto's publish calls are thread-safe (`mosquitto_threaded_set`).
    private nonisolated(unsafe) let handle: OpaquePointer
    private let v5: Bool
    private let capacity: Int
    /// Below this many queued rows the actor reads the next page from the store.
    private let refillBelow: Int
    static let wakeAfterOutcomes = 64
    private let topicPrefix: String
    private let gatewayId: String
    private let defaultExpiry: UInt32?

    init(handle: OpaquePointer, v5: Bool, configuration: PublisherConfiguration) {
        self.handle = handle
        self.v5 = v5
        capacity = configuration.inFlightWindow
        refillBelow = configuration.pageSize
        topicPrefix = configuration.topicPrefix
        gatewayId = configuration.gatewayId
        defaultExpiry = configuration.messageExpirySeconds
    }

    /// Queues rows (after any already queued) and publishes while the window has room.
    func offer(_ messages: [OutboxMessage], as flight: (OutboxMessage) -> Flight) -> Report {
        state.withLock { state in
            state.queue.reserveCapacity(state.queue.count + messages.count)
            for message in messages { state.queue.append(Entry(message: message, flight: flight(message))) }
            state.refillSignalled = false
            fill(&state)
            return take(&state)
        }
    }

    /// Drops the queued rows (not yet handed over); with `prepend`, those go first instead.
    func replaceQueue(with prepend: [OutboxMessage], as flight: Flight) -> Report {
        state.withLock { state in
            state.queue = prepend.map { Entry(message: $0, flight: flight) }
            state.head = 0
            state.refillSignalled = false
            fill(&state)
            return take(&state)
        }
    }

    /// Publishes outside the window (the presence document); its PUBACK is reported.
    func publishNow(_ message: OutboxMessage, flight: Flight) -> Int32? {
        state.withLock { state in
            let (rc, mid) = publish(message, isDocument: false)
            guard rc == Int32(MOSQ_ERR_SUCCESS.rawValue) else { return nil }
            state.inFlight[mid] = flight
            return mid
        }
    }

    /// The outcomes since the last call, and the window's current state.
    func take() -> Report {
        state.withLock { state in take(&state) }
    }

    /// Called on the network thread for each PUBACK. Returns true when the actor should be
    /// woken to `take()` the outcomes (once until it does; see the type's comment for when).
    func completed(mid: Int32, reason: Int32) -> Bool {
        state.withLock { state in
            guard let flight = state.inFlight.removeValue(forKey: mid) else { return false }
            var urgent = false
            switch flight {
            case let .outbox(seq, _):
                state.report.outcomes.append(.outbox(seq: seq, reason: reason))
                state.windowed -= 1
            case .resync:
                state.report.outcomes.append(.resync(reason: reason))
                state.windowed -= 1
            case .presence:
                state.report.outcomes.append(.presence(mid: mid))
                urgent = true
            }
            fill(&state)
            let runningLow = state.queued < refillBelow && !state.refillSignalled
            let wake = urgent || runningLow || state.windowed == 0 || state.report.failure != nil
                || state.report.outcomes.count >= Self.wakeAfterOutcomes
            guard wake, !state.notified else { return false }
            if runningLow { state.refillSignalled = true }
            state.notified = true
            return true
        }
    }

    private func take(_ state: inout State) -> Report {
        var report = state.report
        report.queued = state.queued
        report.inFlight = state.windowed
        state.report = Report(lastHandedSeq: report.lastHandedSeq)
        state.notified = false
        return report
    }

    private func fill(_ state: inout State) {
        while !state.halted, state.windowed < capacity, let entry = state.popFirst() {
            let (rc, mid) = publish(entry.message, isDocument: true)
            // NO_CONN: queued inside libmosquitto (bounded by the window); dropped with the handle.
            guard rc == Int32(MOSQ_ERR_SUCCESS.rawValue) || rc == Int32(MOSQ_ERR_NO_CONN.rawValue) else {
                state.halted = true
                state.report.failure = MQTTError(kind: .publishFailed, message: "\(topicPrefix + entry.message.topic): \(String(cString: mosquitto_strerror(rc)))", code: rc)
                return
            }
            if case let .outbox(seq, qos) = entry.flight {
                state.report.published += 1
                state.report.lastHandedSeq = max(state.report.lastHandedSeq, seq)
                if qos == 0 {
                    state.report.outcomes.append(.outbox(seq: seq, reason: 0))
                    continue
                }
            }
            state.inFlight[mid] = entry.flight
            state.windowed += 1
        }
    }

    /// `message.topic` is a document path (or the presence topic), without the prefix.
    private func publish(_ message: OutboxMessage, isDocument: Bool) -> (rc: Int32, mid: Int32) {
        let properties = MessageProperties.make(v5: v5, gatewayId: gatewayId, path: isDocument ? message.topic : nil,
                                                expiry: MessageProperties.expiry(message.properties) ?? defaultExpiry)
        defer { MessageProperties.free(properties) }
        let topic = topicPrefix + message.topic
        var mid: Int32 = 0
        let rc = message.payload.withUnsafeBytes { bytes in
            if v5 {
                return mosquitto_publish_v5(handle, &mid, topic, Int32(bytes.count), bytes.baseAddress, Int32(message.qos), message.retain, properties)
            }
            return mosquitto_publish(handle, &mid, topic, Int32(bytes.count), bytes.baseAddress, Int32(message.qos), message.retain)
        }
        return (rc, mid)
    }
}
