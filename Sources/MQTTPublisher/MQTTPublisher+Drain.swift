import CMosquitto
import Foundation
import GyroStore

extension MQTTPublisher {
    /// Rows read from the store at a time. Reading stays up to one page ahead of what is
    /// handed over, so a slow read (large documents, an fsync for the removed rows) does not
    /// let the window run dry: memory for up to two pages of documents (~18 MB of 140 KB chunks).
    var pageSize: Int { max(configuration.inFlightWindow * 2, 64) }

    /// Hands rows to libmosquitto until the window is full. Resync documents go first.
    ///
    /// The store is read one page ahead, in a task of its own (`fetchPage`), so PUBACKs keep
    /// being handled and the window stays full while SQLite works; acknowledged rows are
    /// removed in batches by another task (`removeAcknowledged`).
    func fill() async {
        while connected, phase == .running, windowed < configuration.inFlightWindow {
            if !resyncQueue.isEmpty {
                let message = resyncQueue.removeFirst()
                guard publish(message, flight: .resync) else { return }
                continue
            }
            guard !buffered.isEmpty else { break }
            let message = buffered.removeFirst()
            guard publish(message, flight: .outbox(seq: message.seq, qos: message.qos)) else { return }
            cursor = message.seq
        }
        if connected, phase == .running, buffered.count < pageSize, !fetching, !exhausted {
            fetchPage()
        }
        // Acknowledged rows are removed in batches (one transaction and fsync each), at once when idle.
        if !removing, acked.count >= 256 || (windowed == 0 && !acked.isEmpty) {
            removeAcknowledged()
        }
    }

    /// Deletes the acknowledged rows in a task of its own; `.acknowledgedRemoved` follows.
    func removeAcknowledged() {
        removing = true
        let seqs = acked
        acked = []
        let store = self.store, continuation = self.continuation, logger = self.logger
        Task {
            do {
                try await store.acknowledge(seqs)
            } catch {
                // Rows stay in the outbox and are sent again: at-least-once, never lost.
                logger.error("cannot remove acknowledged rows; they will be sent again", metadata: ["error": "\(error)", "rows": "\(seqs.count)"])
            }
            continuation.yield(.acknowledgedRemoved)
        }
    }

    /// Reads the next page after everything already fetched; the rows arrive as `.page`.
    func fetchPage() {
        fetching = true
        let store = self.store, after = fetchCursor, limit = pageSize, epoch = fetchEpoch, version = outboxVersion
        let continuation = self.continuation
        let logger = self.logger
        Task {
            do {
                var rows = try await store.pendingOutbox(after: after, limit: limit)
                // An empty page may have held only superseded rows (deleted by that read): read
                // again until a read deletes nothing.
                var rounds = 0
                while rows.isEmpty, rounds < 1000 {
                    rounds += 1
                    let before = try await store.outboxStats().depth
                    rows = try await store.pendingOutbox(after: after, limit: limit)
                    if rows.isEmpty, try await store.outboxStats().depth >= before { break }
                }
                continuation.yield(.page(epoch: epoch, outboxVersion: version, rows: rows))
            } catch {
                logger.error("cannot read the outbox", metadata: ["error": "\(error)"])
                continuation.yield(.page(epoch: epoch, outboxVersion: version, rows: nil))
            }
        }
    }

    /// A page read by `fetchPage`; dropped if delivery restarted meanwhile.
    func pageArrived(epoch: Int, outboxVersion version: Int, rows: [OutboxMessage]?) async {
        logger.trace("outbox page", metadata: ["rows": "\(rows?.count ?? -1)", "epoch": "\(epoch)", "current": "\(fetchEpoch)"])
        guard epoch == fetchEpoch else { return }
        fetching = false
        guard let rows else { return }
        if let last = rows.last {
            buffered += rows
            fetchCursor = last.seq
        } else {
            // Drained, unless rows were committed while the page was read.
            exhausted = version == outboxVersion
        }
        await fill()
    }

    var inFlightOutboxRows: Int {
        inFlight.values.reduce(0) { count, flight in if case .outbox = flight { count + 1 } else { count } }
    }

    /// Publishes one message; false when libmosquitto refused it (the connection is failing:
    /// its disconnect event follows, and the row is resent on the next connection).
    func publish(_ message: OutboxMessage, flight: Flight) -> Bool {
        guard let connection else { return false }
        let topic = configuration.topicPrefix + message.topic
        let properties = MessageProperties.make(v5: connection.v5, gatewayId: configuration.gatewayId, path: message.topic,
                                                expiry: MessageProperties.expiry(message.properties) ?? configuration.messageExpirySeconds)
        defer { MessageProperties.free(properties) }
        let (rc, mid) = connection.publish(topic: topic, payload: message.payload, qos: message.qos, retain: message.retain, properties: properties)
        // NO_CONN: queued inside libmosquitto (bounded by the window); the handle is dropped on disconnect.
        guard rc == Int32(MOSQ_ERR_SUCCESS.rawValue) || rc == Int32(MOSQ_ERR_NO_CONN.rawValue) else {
            status.lastError = MQTTError(kind: .publishFailed, message: "\(topic): \(String(cString: mosquitto_strerror(rc)))", code: rc).snapshot
            logger.error("publish failed", metadata: ["topic": "\(topic)", "error": "\(String(cString: mosquitto_strerror(rc)))"])
            return false
        }
        if case let .outbox(seq, qos) = flight {
            status.published += 1
            if qos == 0 {
                acked.append(seq)
                status.acknowledged += 1
                return true
            }
        }
        inFlight[mid] = flight
        windowed += 1
        status.inFlight = windowed
        return true
    }

    /// A PUBACK: the row is done (removed with the next batch). A v5 reason >= 128 means the
    /// broker refused the message: it stays in the outbox and is retried on the next connection.
    func acknowledged(mid: Int32, reason: Int32) async {
        guard let flight = inFlight.removeValue(forKey: mid) else { return }
        switch flight {
        case .presence:
            if case .goingOffline(mid) = phase { phase = .stopped }
            return
        case let .outbox(seq, _):
            if reason >= 128 {
                refused.insert(seq)
                status.rejected += 1
                let error = MQTTError(kind: .publishFailed, message: String(cString: mosquitto_reason_string(reason)), code: reason)
                status.lastError = error.snapshot
                logger.error("broker refused a publish; the row stays in the outbox", metadata: ["seq": "\(seq)", "error": "\(error)"])
            } else {
                acked.append(seq)
                status.acknowledged += 1
            }
        case .resync:
            break
        }
        windowed -= 1
        status.inFlight = windowed
        if phase == .draining {
            await shutdownProgress()
        } else {
            await fill()
        }
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

    /// Queues every retained document for re-sending before further outbox rows. Rows
    /// already fetched are dropped and re-read, so none older than the snapshot follows it.
    func startResync() async {
        do {
            let documents = try await store.retainedDocuments()
            resyncQueue = documents
            // Rows already read may be older than the snapshot: read them again after it.
            buffered = []
            fetchCursor = cursor
            fetchEpoch += 1
            fetching = false
            exhausted = false
            logger.info("re-asserting retained documents", metadata: ["documents": "\(documents.count)"])
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
        guard let json, let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return nil }
        return (object["messageExpirySeconds"] as? NSNumber).map { $0.uint32Value }
    }
}
