import CMosquitto
import PosixThreads
import GyroStore

/// One connection's publishes in flight, shared by three parties: the store's reader thread
/// (the feeder: `feed` publishes each outbox row as soon as its body is read, waiting for room
/// in the window), the connection's network thread (whose PUBACK callback records the outcome
/// and makes room) and the publisher actor (which takes the outcomes in batches).
///
/// Why the feeder publishes itself: an outbox row's body (~140 KB for a chunk) is read into
/// one reused buffer and copied into libmosquitto's packet straight away, while it is still in
/// the CPU's cache. Pages of rows read ahead into arrays of their own were cold memory by the
/// time they were published, and the network thread did that copy besides its socket writes,
/// which cost clearly more CPU per chunk document (`mqtt-bench`, docs/benchmarks.md).
///
/// Why the actor is off the per-message path: when every PUBACK went through the actor before
/// the next publish, each one waited for a task wake-up.
/// The actor is woken for a batch of outcomes (`wakeAfterOutcomes`), when the window empties
/// (drained, or shutting down), on a failure and for the presence document's PUBACK: a task
/// switch per message was a good part of the fixed cost of small documents
/// (`mqtt-bench --points 10`, docs/benchmarks.md).
///
/// Documents re-asserted by a resync are queued here (`replaceQueue`) and published from the
/// PUBACK callback; the feeder waits until they are all out, so they go before further rows.
/// Each restart of delivery (new connection, resync, parked rows retried, shutdown) admits a
/// new feeder `epoch`; a feeder of an earlier one stops at its next row.
///
/// All state is behind one lock, held while calling `mosquitto_publish`, so a PUBACK can never
/// be handled before its message id is recorded. Lock order: libmosquitto's callback mutex,
/// then this one, then libmosquitto's message and packet mutexes (its publish calls). The lock
/// is a pthread one (`PosixCondition`, whose condition the feeder waits on), not the standard
/// library's `Mutex`: on Linux that one is built on futexes that ThreadSanitizer cannot see,
/// and a TSan run of the publisher's tests reported every access under it as a race.
final class DeliveryWindow: @unchecked Sendable {
    enum Flight: Sendable {
        case outbox(seq: Int64, qos: Int)
        case resync
        case presence
        /// A message outside the outbox (`publishDirect`), e.g. Home Assistant discovery.
        case direct
    }

    /// What happened to a publish since the last `take()`.
    enum Outcome: Sendable {
        /// PUBACK (QoS 1) or handed over (QoS 0); `reason` >= 128 is a broker refusal.
        case outbox(seq: Int64, reason: Int32)
        case resync(reason: Int32)
        case presence(mid: Int32)
        case direct(mid: Int32, reason: Int32)
    }

    /// A snapshot for the actor, with the outcomes collected since the previous one.
    struct Report: Sendable {
        var outcomes: [Outcome] = []
        /// Outbox rows handed to libmosquitto since the previous report.
        var published = 0
        /// A publish libmosquitto would not take (the connection is failing); nothing more is
        /// handed over on this connection.
        var failure: MQTTError?
        /// Documents queued (resync, small rows), waiting for room in the window.
        var queued = 0
        /// Windowed publishes (outbox and resync) awaiting their PUBACK.
        var inFlight = 0
        /// The highest outbox seq handed to libmosquitto on this connection.
        var lastHandedSeq: Int64 = 0
        /// The lowest outbox seq still queued here or awaiting its PUBACK; nil when none is.
        var lowestPendingSeq: Int64?
    }

    /// How a `feed` call ended.
    enum FeedResult: Sendable, Equatable {
        case published
        /// Delivery restarted (another epoch) or the connection is failing: the pass ends.
        case stopped
        /// No room within the patience given: the pass ends, so that its read transaction
        /// does not stay open while a broker is silent.
        case stalled
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
        /// An actor wake-up (`.windowProgress`) is pending: further outcomes join it.
        var notified = false
        var halted = false
        /// The feeder allowed to publish (see `admit`).
        var feedEpoch = 0

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

    /// Guards `state`; the feeder waits on it for room.
    private let condition = PosixCondition()
    private var state = State()
    /// libmosquitto's publish calls are thread-safe (`mosquitto_threaded_set`).
    private let handle: OpaquePointer
    private let v5: Bool
    private let capacity: Int
    static let wakeAfterOutcomes = 64
    private let topicPrefix: String
    private let gatewayId: String
    private let defaultExpiry: UInt32?

    init(handle: OpaquePointer, v5: Bool, configuration: PublisherConfiguration) {
        self.handle = handle
        self.v5 = v5
        capacity = configuration.inFlightWindow
        topicPrefix = configuration.topicPrefix
        gatewayId = configuration.gatewayId
        defaultExpiry = configuration.messageExpirySeconds
    }

    private func locked<T>(_ body: (inout State) throws -> T) rethrows -> T {
        condition.lock()
        defer { condition.unlock() }
        return try body(&state)
    }

    /// From now on only a feeder of `epoch` publishes outbox rows.
    func admit(_ epoch: Int) {
        locked { state in
            state.feedEpoch = epoch
            condition.broadcast()
        }
    }

    /// Publishes an outbox row once the window has room and nothing is queued ahead of it, or
    /// queues a copy of a small one (`queueBelowBytes`) while the queue has room. Called on the
    /// store's reader thread; blocks it for at most `patience`.
    func feed(_ row: OutboxRowView, epoch: Int, patience: Duration) -> FeedResult {
        // Not `locked`: the wait must re-read `state` after each wake-up, and inside an inout
        // access the optimiser may keep it in registers (measured: a feeder that never woke).
        condition.lock()
        defer { condition.unlock() }
        let small = row.payload.count <= Self.queueBelowBytes
        if !(state.windowed < capacity && state.queued == 0) && !(small && state.queued < capacity) {
            let deadline = PosixCondition.Deadline.after(patience)
            // A small row waits until the queue is half empty: one wake-up per several PUBACKs.
            while !state.halted, state.feedEpoch == epoch,
                  small ? state.queued > capacity / 2 : state.windowed >= capacity || state.queued > 0 {
                if !condition.wait(until: deadline) { return .stalled }
            }
        }
        guard !state.halted, state.feedEpoch == epoch else { return .stopped }
        let flight = Flight.outbox(seq: row.seq, qos: row.qos)
        guard state.windowed < capacity, state.queued == 0 else {
            // The network thread publishes it on a PUBACK, after what is queued before it.
            let message = OutboxMessage(seq: row.seq, topic: row.topic, qos: row.qos, retain: row.retain, payload: [UInt8](row.payload),
                                        properties: row.properties, device: row.device, createdAt: row.createdAt)
            state.queue.append(Entry(message: message, flight: flight))
            return .published
        }
        let result = publish(topic: row.topic, qos: row.qos, retain: row.retain, properties: row.properties, payload: row.payload, isDocument: true)
        return record(result, flight: flight, topic: row.topic, in: &state) ? .published : .stopped
    }

    /// Rows up to this size are copied into the queue when the window is full, and published
    /// by the network thread on a PUBACK: for them a copy costs less than waking the feeder
    /// for each PUBACK (`mqtt-bench --points 10`, docs/benchmarks.md). Larger rows wait in the feeder: copied, they would be cold by the time they
    /// are published.
    static let queueBelowBytes = 16 * 1024

    /// Stops delivery on this connection (it is being torn down): a waiting feeder returns.
    func halt() {
        locked { state in
            state.halted = true
            condition.broadcast()
        }
    }

    /// Queues resync documents to go before any further outbox row (none: shutdown), admits
    /// feeder `epoch` and publishes while the window has room.
    func replaceQueue(with documents: [OutboxMessage], admitting epoch: Int) -> Report {
        locked { state in
            state.queue = documents.map { Entry(message: $0, flight: .resync) }
            state.head = 0
            state.feedEpoch = epoch
            fillFromQueue(&state)
            condition.broadcast()
            return take(&state)
        }
    }

    /// Publishes outside the window (the presence document); its PUBACK is reported.
    func publishNow(_ message: OutboxMessage, flight: Flight) -> Int32? {
        locked { state in
            let (rc, mid) = message.payload.withUnsafeBytes { payload in
                publish(topic: message.topic, qos: message.qos, retain: message.retain, properties: message.properties, payload: payload, isDocument: false)
            }
            guard rc == Int32(MOSQ_ERR_SUCCESS.rawValue) else { return nil }
            state.inFlight[mid] = flight
            return mid
        }
    }

    /// Publishes a QoS 1 message outside the window and the outbox, on `topic` as given (no
    /// topic prefix, no message expiry: a retained discovery document must not expire); its
    /// PUBACK is reported as `.direct`. Returns the message id, or nil if libmosquitto refused it.
    func publishDirect(topic: String, payload: [UInt8], retain: Bool) -> Int32? {
        locked { state in
            let properties = MessageProperties.make(v5: v5, gatewayId: gatewayId, path: nil, expiry: nil)
            defer { MessageProperties.free(properties) }
            var mid: Int32 = 0
            let rc = payload.withUnsafeBytes { bytes in
                v5 ? mosquitto_publish_v5(handle, &mid, topic, Int32(bytes.count), bytes.baseAddress, 1, retain, properties)
                    : mosquitto_publish(handle, &mid, topic, Int32(bytes.count), bytes.baseAddress, 1, retain)
            }
            guard rc == Int32(MOSQ_ERR_SUCCESS.rawValue) else { return nil }
            state.inFlight[mid] = .direct
            return mid
        }
    }

    /// The outcomes since the last call, and the window's current state.
    func take() -> Report {
        locked { state in take(&state) }
    }

    /// Called on the network thread for each PUBACK. Returns true when the actor should be
    /// woken to `take()` the outcomes (once until it does; see the type's comment for when).
    func completed(mid: Int32, reason: Int32) -> Bool {
        locked { state in
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
            case .direct:
                state.report.outcomes.append(.direct(mid: mid, reason: reason))
                urgent = true
            }
            fillFromQueue(&state)
            // A large row's feeder is woken for each PUBACK, not a batch of them: publishing
            // nothing while several PUBACKs came in let the broker's next PUBACK wait out TCP's
            // delayed ACK (40 ms stalls). Queued rows keep data flowing for small ones.
            if state.queued <= capacity / 2 { condition.broadcast() }
            let wake = urgent || state.windowed == 0 || state.report.failure != nil
                || state.report.outcomes.count >= Self.wakeAfterOutcomes
            guard wake, !state.notified else { return false }
            state.notified = true
            return true
        }
    }

    private func take(_ state: inout State) -> Report {
        var report = state.report
        report.queued = state.queued
        report.inFlight = state.windowed
        report.lowestPendingSeq = lowestPendingSeq(state)
        state.report = Report(lastHandedSeq: report.lastHandedSeq)
        state.notified = false
        return report
    }

    /// At most a window and a queue of entries (`inFlightWindow` each): cheap once per report.
    private func lowestPendingSeq(_ state: State) -> Int64? {
        var lowest: Int64?
        func consider(_ flight: Flight) {
            if case let .outbox(seq, _) = flight, lowest.map({ seq < $0 }) ?? true { lowest = seq }
        }
        for flight in state.inFlight.values { consider(flight) }
        for entry in state.queue[state.head...] { consider(entry.flight) }
        return lowest
    }

    /// Publishes queued documents (resync, then small rows) while the window has room.
    private func fillFromQueue(_ state: inout State) {
        while !state.halted, state.windowed < capacity, let entry = state.popFirst() {
            let message = entry.message
            let (rc, mid) = message.payload.withUnsafeBytes { payload in
                publish(topic: message.topic, qos: message.qos, retain: message.retain, properties: message.properties, payload: payload, isDocument: true)
            }
            guard record((rc, mid), flight: entry.flight, topic: message.topic, in: &state) else { return }
        }
    }

    /// Records a publish handed to libmosquitto; false when it was not taken (the window halts).
    private func record(_ result: (rc: Int32, mid: Int32), flight: Flight, topic: String, in state: inout State) -> Bool {
        // NO_CONN: queued inside libmosquitto (bounded by the window); dropped with the handle.
        guard result.rc == Int32(MOSQ_ERR_SUCCESS.rawValue) || result.rc == Int32(MOSQ_ERR_NO_CONN.rawValue) else {
            state.halted = true
            state.report.failure = MQTTError(kind: .publishFailed, message: "\(topicPrefix + topic): \(String(cString: mosquitto_strerror(result.rc)))", code: result.rc)
            condition.broadcast()
            return false
        }
        if case let .outbox(seq, qos) = flight {
            state.report.published += 1
            state.report.lastHandedSeq = max(state.report.lastHandedSeq, seq)
            if qos == 0 {
                state.report.outcomes.append(.outbox(seq: seq, reason: 0))
                return true
            }
        }
        state.inFlight[result.mid] = flight
        state.windowed += 1
        return true
    }

    /// `topic` is a document path (or the presence topic), without the prefix.
    private func publish(topic: String, qos: Int, retain: Bool, properties json: String?, payload: UnsafeRawBufferPointer,
                         isDocument: Bool) -> (rc: Int32, mid: Int32) {
        let properties = MessageProperties.make(v5: v5, gatewayId: gatewayId, path: isDocument ? topic : nil,
                                                expiry: MessageProperties.expiry(json) ?? defaultExpiry)
        defer { MessageProperties.free(properties) }
        let topic = topicPrefix + topic
        var mid: Int32 = 0
        let rc = v5
            ? mosquitto_publish_v5(handle, &mid, topic, Int32(payload.count), payload.baseAddress, Int32(qos), retain, properties)
            : mosquitto_publish(handle, &mid, topic, Int32(payload.count), payload.baseAddress, Int32(qos), retain)
        return (rc, mid)
    }
}
