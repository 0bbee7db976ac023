import CMosquitto
import GyroStore
import JSON

extension MQTTPublisher {
    var pageSize: Int { configuration.pageSize }

    /// Keeps a feeder running while there are rows to send, and removes acknowledged rows in
    /// batches.
    ///
    /// The feeder (`fetchPage`) publishes rows on the store's reader thread as it reads them;
    /// acknowledged rows are removed by another task (`removeAcknowledged`), so the actor stays
    /// free for outcomes.
    func fill() async {
        if connected, phase == .running || phase == .draining, failbackTarget == nil, !fetching, !exhausted, !stalled {
            fetchPage()
        }
        // One transaction and fsync per batch; at once when nothing is in flight.
        if !removing, acked.count >= 256 || (windowed == 0 && !acked.isEmpty) {
            removeAcknowledged()
        }
        resumeIdleWaiters()
    }

    /// Takes in a window report: acknowledged rows, refusals, a failed publish, the counts.
    func apply(_ report: DeliveryWindow.Report) async {
        queued = report.queued
        windowed = report.inFlight
        lowestPendingSeq = report.lowestPendingSeq
        lastHandedSeq = max(lastHandedSeq, report.lastHandedSeq)
        status.published += report.published
        status.inFlight = report.inFlight
        // Room was made: a feeder that found none may try again.
        if !report.outcomes.isEmpty { stalled = false }
        var refusals: [(seq: Int64, reason: String)] = []
        for outcome in report.outcomes {
            switch outcome {
            case let .outbox(seq, reason) where reason >= 128:
                // The row stays in the outbox: sent again on the next connection, or parked.
                status.rejected += 1
                let error = MQTTError(kind: .publishFailed, message: String(cString: mosquitto_reason_string(reason)), code: reason)
                status.lastError = error.snapshot
                refusals.append((seq, "\(error)"))
                logger.error("broker refused a publish; the row stays in the outbox", metadata: ["seq": "\(seq)", "error": "\(error)"])
            case let .outbox(seq, _):
                acked.append(seq)
                status.acknowledged += 1
            case .resync:
                break
            case let .presence(mid):
                if case .goingOffline(mid) = phase { phase = .stopped }
            case let .direct(mid, reason):
                directCompleted(mid: mid, reason: reason)
            }
        }
        if !refusals.isEmpty { recordRefusals(refusals) }
        if let failure = report.failure {
            // The connection is failing: its disconnect event follows, and the rows are resent.
            status.lastError = failure.snapshot
            logger.error("publish failed", metadata: ["error": "\(failure)"])
        }
        await fill()
        if phase == .draining { await shutdownProgress() }
    }

    /// Counts refusals in the store, in a task of its own; rows refused too often are parked.
    func recordRefusals(_ refusals: [(seq: Int64, reason: String)]) {
        let logger = self.logger, limit = configuration.parkAfterRefusals
        // Isolated to the publisher (it captures `self`), so it starts on the writer's thread.
        Task { [self] in
            do {
                let parked = try await store.recordRefusals(refusals, parkAfter: limit)
                if !parked.isEmpty {
                    logger.error("parked outbox rows the broker refused \(limit) times; they are kept and retried by resync",
                                 metadata: ["seqs": "\(parked)", "reason": "\(refusals.last?.reason ?? "")"])
                }
            } catch {
                logger.error("cannot record refused publishes; they will be sent again", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Makes parked rows eligible again and reads the outbox again from the first of them.
    func retryParkedRows() async {
        do {
            let (count, first) = try await store.retryParked()
            guard count > 0, let first else { return }
            restartFeed(from: min(fetchCursor, first - 1))
            logger.info("retrying parked outbox rows", metadata: ["rows": "\(count)"])
        } catch {
            logger.error("cannot retry parked outbox rows", metadata: ["error": "\(error)"])
        }
    }

    /// Deletes the acknowledged rows in a task of its own; `.acknowledgedRemoved` follows.
    ///
    /// The task is isolated to the publisher, whose executor is the writer's: the delete runs
    /// on the thread that is already awake, after the event being handled.
    func removeAcknowledged() {
        removing = true
        let seqs = acked
        acked = []
        let logger = self.logger
        Task { [self] in
            do {
                try await store.acknowledge(seqs)
            } catch {
                // Rows stay in the outbox and are sent again: at-least-once, never lost.
                logger.error("cannot remove acknowledged rows; they will be sent again", metadata: ["error": "\(error)", "rows": "\(seqs.count)"])
            }
            continuation.yield(.acknowledgedRemoved)
        }
    }

    /// Starts a feeder for the next rows after `fetchCursor`: it reads up to a page of them and
    /// publishes each as it is read (`DeliveryWindow.feed`); `.page` follows.
    func fetchPage() {
        guard let window = connection?.window else { return }
        fetching = true
        let after = fetchCursor, limit = pageSize, epoch = fetchEpoch, version = outboxVersion
        let logger = self.logger, patience = Self.feedPatience
        // Isolated to the publisher: the pass goes from the writer's thread to a reader's and
        // back, without a dispatch worker on either way.
        Task { [self] in
            do {
                let pass = try await store.deliverOutbox(after: after, limit: limit) { row in
                    window.feed(row, epoch: epoch, patience: patience) == .published
                }
                continuation.yield(.page(epoch: epoch, outboxVersion: version, pass: pass))
            } catch {
                logger.error("cannot read the outbox", metadata: ["error": "\(error)"])
                continuation.yield(.page(epoch: epoch, outboxVersion: version, pass: nil))
            }
        }
    }

    /// How long a feeder waits for room in the window before it ends its pass (and its read
    /// transaction); the next one starts when PUBACKs make room.
    static let feedPatience = Duration.seconds(5)

    /// A feeder's pass ended; dropped if delivery restarted meanwhile.
    func pageArrived(epoch: Int, outboxVersion version: Int, pass: OutboxPass?) async {
        logger.trace("outbox pass", metadata: ["delivered": "\(pass?.delivered ?? -1)", "epoch": "\(epoch)", "current": "\(fetchEpoch)"])
        guard epoch == fetchEpoch else { return }
        fetching = false
        // A failed read is tried again on the next event.
        guard let pass else { return }
        if let last = pass.lastSeq { fetchCursor = last }
        if !pass.stopped, !pass.limited {
            // Drained, unless rows were committed while the pass read.
            exhausted = version == outboxVersion
        }
        // Stopped in this epoch: no room in time, or the connection is failing.
        stalled = pass.stopped
        if let connection {
            await apply(connection.window.take())
        } else {
            await fill()
        }
    }

    /// Delivery goes on from `cursor` with a new feeder; the current one stops at its next row.
    func restartFeed(from cursor: Int64) {
        fetchCursor = cursor
        fetchEpoch += 1
        fetching = false
        exhausted = false
        stalled = false
        connection?.window.admit(fetchEpoch)
    }

    /// Removes acknowledged rows from the store, in one transaction.
    func flushAcks() async {
        guard !acked.isEmpty else { return }
        let seqs = acked
        acked = []
        do {
            try await store.acknowledge(seqs)
        } catch {
            // Rows stay in the outbox and are sent again: at-least-once, never lost.
            logger.error("cannot remove acknowledged rows; they will be sent again", metadata: ["error": "\(error)", "rows": "\(seqs.count)"])
        }
    }

    /// Sends every retained document before further outbox rows. The feeder stops; rows not
    /// yet handed over are read again after the snapshot, so none older than it follows it.
    func startResync() async {
        guard let connection else { return }
        do {
            let documents = try await store.retainedDocuments()
            let report = connection.window.replaceQueue(with: documents, admitting: fetchEpoch + 1)
            restartFeed(from: max(lastHandedSeq, report.lastHandedSeq))
            logger.info("re-asserting retained documents", metadata: ["documents": "\(documents.count)"])
            await apply(report)
        } catch {
            logger.error("cannot list retained documents for resync", metadata: ["error": "\(error)"])
        }
    }
}

/// MQTT v5 PUBLISH properties: content type, payload format, gateway and path, expiry.
enum MessageProperties {
    static func make(v5: Bool, gatewayId: String, path: String?, expiry: UInt32?) -> OpaquePointer? {
        guard v5 else { return nil }
        var list: OpaquePointer?
        mosquitto_property_add_string(&list, Int32(MQTT_PROP_CONTENT_TYPE.rawValue), "application/json")
        mosquitto_property_add_byte(&list, Int32(MQTT_PROP_PAYLOAD_FORMAT_INDICATOR.rawValue), 1)
        mosquitto_property_add_string_pair(&list, Int32(MQTT_PROP_USER_PROPERTY.rawValue), "gateway", gatewayId)
        if let path { mosquitto_property_add_string_pair(&list, Int32(MQTT_PROP_USER_PROPERTY.rawValue), "path", path) }
        if let expiry { mosquitto_property_add_int32(&list, Int32(MQTT_PROP_MESSAGE_EXPIRY_INTERVAL.rawValue), expiry) }
        return list
    }

    static func free(_ list: OpaquePointer?) {
        var list = list
        mosquitto_property_free_all(&list)
    }

    /// `messageExpirySeconds` from an outbox row's properties JSON, if any.
    static func expiry(_ json: String?) -> UInt32? {
        guard let json, let properties = try? JSONValue(parsing: json.utf8) else { return nil }
        return properties["messageExpirySeconds"]?.int64.flatMap { UInt32(exactly: $0) }
    }
}
