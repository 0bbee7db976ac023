import CMosquitto
import Foundation
import GyroStore

extension MQTTPublisher {
    /// Rows fetched from the store at a time: two windows, so the store is read in batches.
    var pageSize: Int { configuration.inFlightWindow * 2 }

    /// Hands rows to libmosquitto until the window is full or the outbox is drained.
    /// Resync documents go first. The store is read (and acknowledged rows removed) only
    /// when the local page is used up, so SQLite sees batches, not one transaction per row.
    func fill() async {
        var emptyReads = 0
        while connected, phase == .running, windowed < configuration.inFlightWindow {
            if !resyncQueue.isEmpty {
                let message = resyncQueue.removeFirst()
                guard publish(message, flight: .resync) else { return }
                continue
            }
            if buffered.isEmpty {
                await flushAcks()
                let rows: [OutboxMessage]
                do {
                    rows = try await store.pendingOutbox(after: cursor, limit: pageSize)
                } catch {
                    logger.error("cannot read the outbox", metadata: ["error": "\(error)"])
                    return
                }
                if rows.isEmpty {
                    // The page may have held only superseded rows (now deleted): look again
                    // while the outbox holds more than what is in flight.
                    emptyReads += 1
                    guard emptyReads < 100, let depth = try? await store.outboxStats().depth,
                          depth > inFlightOutboxRows + refused.count else { return }
                    continue
                }
                buffered = rows
            }
            let message = buffered.removeFirst()
            guard publish(message, flight: .outbox(seq: message.seq, qos: message.qos)) else { return }
            cursor = message.seq
        }
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
            if windowed == 0 { await flushAcks() }
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
            buffered = []
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
