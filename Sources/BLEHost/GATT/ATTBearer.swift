import ATT
import BluetoothWire
import Synchronization
import PosixThreads

/// The ATT client side of one link's fixed channel (CID 0x0004), Core v5.4, Vol 3, Part F.
///
/// Design overview: the host's dispatch calls ``receive(_:)`` synchronously for every ATT PDU
/// from the peer, in order, with no actor hop, because notifications arrive thousands of times
/// a second: a notification's value is copied into the bearer's reused batch and handed to its
/// subscriber with the rest of the wake-up's (``flush()``), so the subscriber enters its actor
/// once per wake-up, not per value. State is behind one `Mutex`: the single outstanding request
/// (ATT allows one per bearer, 3.3.2; ``GATTClient`` queues callers before they get here), the
/// notification subscribers by value handle, the held batch, and whether the link is down. ``close()`` fails
/// the request and ends every subscription, so nothing waits on a dead link.
///
/// After a request timeout the spec (3.3.3) forbids further requests on the bearer: later
/// requests fail at once with the same timeout until the link is reconnected.
final class ATTBearer: Sendable {
    typealias Sender = @Sendable ([UInt8]) async throws -> Void

    /// The outstanding request. It is registered before the PDU is sent, so a response that
    /// overtakes the sender's return is kept in `result` until the caller starts waiting.
    private struct Pending {
        var id: UInt64
        var request: String
        var continuation: CheckedContinuation<ATTPDU, any Error>?
        var result: Result<ATTPDU, any Error>?
    }

    private struct State {
        /// Few (one or two per link): a flat list is cheaper to search per notification than a
        /// dictionary of dictionaries, and hands a subscriber out without copying a collection.
        var subscribers: [(handle: UInt16, id: UInt64, subscriber: NotificationSubscriber)] = []
        var notifications = 0
        /// The values of this wake-up not yet handed over, all for the subscriber `heldFor`.
        var held = NotificationBatch()
        var heldFor: UInt64?
        var nextSubscriberID: UInt64 = 0
        var closed = false
        var timedOut: (request: String, after: Duration)?
        var mtu: UInt16 = 23
        var unexpected = 0
        var malformed = 0
        var nextID: UInt64 = 0
        /// Last: its size is known only at run time (a checked continuation), and so are the
        /// offsets of the fields after it, which the notification path would then look up.
        var pending: Pending?
    }

    /// What the dispatcher must do after a received PDU.
    enum Reaction: Equatable {
        case none
        /// Send a Handle Value Confirmation (an indication arrived).
        case confirm
        /// The PDU could not be decoded (peer fault); counted.
        case malformed
        /// A response nobody waited for, or an opcode a client does not handle; counted.
        case unexpected
    }

    private let state = Mutex(State())
    private let sender: Sender
    let requestTimeout: Duration
    /// The host's loop, whose timers time requests out.
    private let loop: ThreadExecutor

    init(requestTimeout: Duration, loop: ThreadExecutor, sender: @escaping Sender) {
        self.requestTimeout = requestTimeout
        self.loop = loop
        self.sender = sender
    }

    var mtu: UInt16 {
        get { state.withLock { $0.mtu } }
        set { state.withLock { $0.mtu = newValue } }
    }

    var isClosed: Bool { state.withLock { $0.closed } }

    /// Counters for status and tests: unexpected PDUs, malformed PDUs, notifications delivered.
    var counters: (unexpected: Int, malformed: Int, notifications: Int) {
        state.withLock { ($0.unexpected, $0.malformed, $0.notifications) }
    }

    /// Sends a command (no response expected).
    func command(_ pdu: [UInt8]) async throws {
        if state.withLock({ $0.closed }) { throw GATTError.disconnected(request: "ATT command") }
        do {
            try await sender(pdu)
        } catch is BLEHostError {
            throw GATTError.disconnected(request: "ATT command")
        }
    }

    /// Sends `pdu` and waits for its response (or an Error Response) until the request timeout.
    /// It is a programmer error to call this while another request is outstanding.
    func request(_ pdu: [UInt8], name: String) async throws -> ATTPDU {
        let id: UInt64 = try state.withLock { state throws(GATTError) -> UInt64 in
            if state.closed { throw .disconnected(request: name) }
            if let timedOut = state.timedOut {
                throw .timeout(request: "\(name) (bearer unusable since \(timedOut.request) timed out)", after: timedOut.after)
            }
            precondition(state.pending == nil, "one ATT request at a time")
            state.nextID += 1
            state.pending = Pending(id: state.nextID, request: name)
            return state.nextID
        }
        let timeout = requestTimeout
        // A timer of the loop, not a sleeping task: a sleep's dispatch timer wakes two threads of
        // the global executor when it ends, even after the answer has cancelled it.
        // Holds the bearer strongly until the answer cancels it: a weak reference would give the
        // bearer a side table, which makes every retain and release of it on the data path slower.
        let alarm = loop.makeAlarm()
        loop.schedule(after: timeout.seconds, tolerance: timeout.seconds / 16, alarm: alarm) {
            self.settle(id: id, .failure(GATTError.timeout(request: name, after: timeout)), timedOut: timeout)
        }
        defer { loop.cancel(alarm) }
        do {
            try await sender(pdu)
        } catch is BLEHostError {
            settle(id: id, .failure(GATTError.disconnected(request: name)))
        } catch {
            settle(id: id, .failure(error))
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ATTPDU, any Error>) in
                let ready = state.withLock { state -> Result<ATTPDU, any Error>? in
                    guard var pending = state.pending, pending.id == id else {
                        return .failure(GATTError.disconnected(request: name))
                    }
                    if let result = pending.result {
                        state.pending = nil
                        return result
                    }
                    pending.continuation = continuation
                    state.pending = pending
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            self.settle(id: id, .failure(CancellationError()))
        }
    }

    /// Resolves request `id` (if still outstanding) with `result`.
    private func settle(id: UInt64, _ result: Result<ATTPDU, any Error>, timedOut: Duration? = nil) {
        let continuation = state.withLock { state -> CheckedContinuation<ATTPDU, any Error>? in
            guard var pending = state.pending, pending.id == id, pending.result == nil else { return nil }
            if let timedOut { state.timedOut = (pending.request, timedOut) }
            if let continuation = pending.continuation {
                state.pending = nil
                return continuation
            }
            pending.result = result
            state.pending = pending
            return nil
        }
        continuation?.resume(with: result)
    }

    /// Resolves whatever request is outstanding; `false` when none is.
    private func settleCurrent(_ result: (String) -> Result<ATTPDU, any Error>) -> Bool {
        let id = state.withLock { $0.pending.flatMap { $0.result == nil ? $0.id : nil } }
        let name = state.withLock { $0.pending?.request } ?? ""
        guard let id else { return false }
        settle(id: id, result(name))
        return true
    }

    /// Hands the values notified or indicated on `handle` to `subscriber`, on the host's thread,
    /// until ``close()`` (which calls its `ended`). Returns an id for ``unsubscribe(_:handle:)``.
    ///
    /// - throws: ``GATTError/disconnected(request:)`` when the link is already down.
    func subscribe(handle: UInt16, _ subscriber: NotificationSubscriber) throws(GATTError) -> UInt64 {
        let registered = state.withLock { state -> UInt64? in
            guard !state.closed else { return nil }
            state.nextSubscriberID += 1
            state.subscribers.append((handle, state.nextSubscriberID, subscriber))
            return state.nextSubscriberID
        }
        guard let registered else { throw .disconnected(request: "subscribe to 0x\(String(handle, radix: 16))") }
        return registered
    }

    func unsubscribe(_ id: UInt64, handle: UInt16) {
        state.withLock { state in state.subscribers.removeAll { $0.id == id && $0.handle == handle } }
    }

    /// Handles one ATT PDU from the peer. Called by the host's dispatch, in order.
    func receive(_ bytes: ArraySlice<UInt8>) -> Reaction {
        guard let first = bytes.first else {
            state.withLock { $0.malformed += 1 }
            return .malformed
        }
        let opcode = ATTOpcode(rawValue: first)
        // Fast path for notifications: no full decode, no allocation beyond the value.
        if opcode == .handleValueNotification || opcode == .handleValueIndication {
            guard bytes.count >= 3 else {
                state.withLock { $0.malformed += 1 }
                return .malformed
            }
            let start = bytes.startIndex
            let handle = UInt16(bytes[start + 1]) | UInt16(bytes[start + 2]) << 8
            let value = bytes[(start + 3)...]
            // The first subscriber's values are held for the end of the wake-up; a second
            // subscriber for the same handle is rare. (Searched by index: a slice or a copied
            // entry of the list would retain its buffer or its callbacks.)
            var delivery = Delivery.none
            var id: UInt64 = 0
            state.withLock { state in
                state.notifications += 1
                var found: Int?
                for index in state.subscribers.indices where state.subscribers[index].handle == handle {
                    if found != nil {
                        delivery = .several
                        return
                    }
                    found = index
                }
                guard let found else { return }
                id = state.subscribers[found].id
                guard state.heldFor == nil || state.heldFor == id else {
                    delivery = .afterFlush
                    return
                }
                state.heldFor = id
                state.held.append(value)
                delivery = .held
            }
            switch delivery {
            case .none, .held:
                break
            case .afterFlush:
                flush()
                state.withLock { state in
                    state.heldFor = id
                    state.held.append(value)
                }
            case .several:
                flush()
                let all = state.withLock { $0.subscribers.filter { $0.handle == handle }.map(\.subscriber) }
                let batch = NotificationBatch(value)
                for subscriber in all { subscriber.receive.call(batch) }
            }
            return opcode == .handleValueIndication ? .confirm : .none
        }
        // Held values first: whatever this PDU settles comes after them.
        flush()
        let pdu: ATTPDU
        do {
            pdu = try ATTPDU(decoding: bytes)
        } catch {
            // A malformed response still ends the request: the peer answered, badly.
            state.withLock { $0.malformed += 1 }
            _ = settleCurrent { .failure(GATTError.unexpectedResponse(request: $0, detail: "malformed \(opcode): \(error)")) }
            return .malformed
        }
        if opcode.isRequest || opcode == .writeCommand || opcode == .signedWriteCommand {
            // We expose no GATT server; requests from the peer are answered by the owner with
            // Request Not Supported (3.4.1.1); commands are ignored.
            state.withLock { $0.unexpected += 1 }
            return .unexpected
        }
        guard settleCurrent({ _ in .success(pdu) }) else {
            state.withLock { $0.unexpected += 1 }
            return .unexpected
        }
        return .none
    }

    private enum Delivery { case none, held, afterFlush, several }

    /// Hands the held values to their subscriber in one call. The host calls this at the end of
    /// each wake-up, and the bearer before anything else it passes on (a response, the link's
    /// end), so values keep their order and none waits past its wake-up.
    func flush() {
        var receive: NotificationSubscriber.Receive?
        var batch = state.withLock { state in
            var batch = NotificationBatch()
            guard let id = state.heldFor else { return batch }
            state.heldFor = nil
            swap(&batch, &state.held)
            receive = state.subscribers.first(where: { $0.id == id })?.subscriber.receive
            return batch
        }
        guard let receive else { return }
        receive.call(batch)
        batch.removeAll()
        state.withLock { state in if state.held.isEmpty { swap(&batch, &state.held) } }
    }

    /// Fails the outstanding request and finishes every stream. Idempotent.
    func close() {
        flush()
        let (pending, subscribers) = state.withLock { state in
            state.closed = true
            defer { state.subscribers = [] }
            return (state.pending, state.subscribers)
        }
        if let pending { settle(id: pending.id, .failure(GATTError.disconnected(request: pending.request))) }
        for entry in subscribers { entry.subscriber.ended() }
    }
}

/// Who receives a characteristic's notifications: `receive` for each wake-up's values, on the
/// host's thread (the batch is valid for the call only), and `ended` once when the link goes down.
struct NotificationSubscriber: Sendable {
    /// The callback in a struct of its own, so that it alone is copied out of the bearer's lock
    /// for each batch. (A bare closure returned through the generic `withLock` is wrapped in a
    /// thunk, allocated on every call.)
    struct Receive: Sendable {
        let call: @Sendable (NotificationBatch) -> Void
    }

    let receive: Receive
    let ended: @Sendable () -> Void

    init(batch: @escaping @Sendable (NotificationBatch) -> Void, ended: @escaping @Sendable () -> Void) {
        receive = Receive(call: batch)
        self.ended = ended
    }

    init(value: @escaping @Sendable (ArraySlice<UInt8>) -> Void, ended: @escaping @Sendable () -> Void) {
        self.init(batch: { for bytes in $0 { value(bytes) } }, ended: ended)
    }
}

extension ATTOpcode {
    /// Requests are the opcodes a server must answer (Core v5.4, Vol 3, Part F, 3.3: even codes
    /// below 0x1E, with the confirmations and commands excluded).
    var isRequest: Bool {
        switch self {
        case .exchangeMTURequest, .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest,
             .readRequest, .readBlobRequest, .readMultipleRequest, .readByGroupTypeRequest, .writeRequest,
             .prepareWriteRequest, .executeWriteRequest:
            return true
        default:
            return rawValue == 0x20 // Read Multiple Variable Request
        }
    }
}
