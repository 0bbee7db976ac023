import CMosquitto
import Foundation
import GyroStore

extension MQTTPublisher {
    var pageSize: Int { configuration.pageSize }

    /// Keeps the window's queue stocked and removes acknowledged rows in batches.
    ///
    /// The store is read one page ahead, in a task of its own (`fetchPage`); acknowledged rows
    /// are removed by another (`removeAcknowledged`), so the actor stays free for outcomes.
    func fill() async {
        if connected, phase == .running, queued < pageSize, !fetching, !exhausted {
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
        lastHandedSeq = max(lastHandedSeq, report.lastHandedSeq)
        status.published += report.published
        status.inFlight = report.inFlight
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
            }
        }
        if !refusals.isEmpty { recordRefusals(refusals) }
        if let failure = report.failure {
            // The connection is failing: its disconnect event follows, and the rows are resent.
            status.lastError = failure.snapshot
            logger.error("publish failed", metadata: ["error": "\(failure)"])
        }
        if phase == .draining {
            await shutdownProgress()
        } else {
            await fill()
        }
    }

    /// Counts refusals in the store, in a task of its own; rows refused too often are parked.
    func recordRefusals(_ refusals: [(seq: Int64, reason: String)]) {
        let store = self.store, logger = self.logger, limit = configuration.parkAfterRefusals
        Task {
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
            fetchCursor = min(fetchCursor, first - 1)
            fetchEpoch += 1
            fetching = false
            exhausted = false
            logger.info("retrying parked outbox rows", metadata: ["rows": "\(count)"])
        } catch {
            logger.error("cannot retry parked outbox rows", metadata: ["error": "\(error)"])
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

    /// A page read by `fetchPage`, queued in the window; dropped if delivery restarted meanwhile.
    func pageArrived(epoch: Int, outboxVersion version: Int, rows: [OutboxMessage]?) async {
        logger.trace("outbox page", metadata: ["rows": "\(rows?.count ?? -1)", "epoch": "\(epoch)", "current": "\(fetchEpoch)"])
        guard epoch == fetchEpoch else { return }
        fetching = false
        guard let rows else { return }
        if let last = rows.last {
            fetchCursor = last.seq
            if let connection, phase == .running {
                await apply(connection.window.offer(rows) { .outbox(seq: $0.seq, qos: $0.qos) })
                return
            }
        } else {
            // Drained, unless rows were committed while the page was read.
            exhausted = version == outboxVersion
        }
        await fill()
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

    /// Sends every retained document before further outbox rows. Rows already queued are
    /// dropped and read again after the snapshot, so none older than it follows it.
    func startResync() async {
        guard let connection else { return }
        do {
            let documents = try await store.retainedDocuments()
            let report = connection.window.replaceQueue(with: documents, as: .resync)
            fetchCursor = max(lastHandedSeq, report.lastHandedSeq)
            fetchEpoch += 1
            fetching = false
            exhausted = false
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
        guard let json, let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else { return nil }
        return (object["messageExpirySeconds"] as? NSNumber).map { $0.uint32Value }
    }
}
