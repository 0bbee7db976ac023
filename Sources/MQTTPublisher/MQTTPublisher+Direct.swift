/// Messages outside the outbox, on the publisher's connection: state that is re-sent by its
/// owner rather than stored (Home Assistant discovery and state documents).
extension MQTTPublisher {
    /// Publishes `payload` at QoS 1 on `topic` exactly as given: no `topicPrefix` is added and
    /// no message expiry is set. A zero-byte retained payload clears the topic's retained message.
    ///
    /// Returns true once the broker acknowledged it (PUBACK below 128); false at once when not
    /// connected (or stopping), and false when the broker refused it or the connection was
    /// lost first. Nothing is queued or retried: the caller publishes again, e.g. when
    /// `status.connections` shows a new connection.
    public func publishDirect(topic: String, payload: [UInt8], retain: Bool) async -> Bool {
        guard phase == .running, connected, let connection else { return false }
        return await withCheckedContinuation { continuation in
            guard let mid = connection.window.publishDirect(topic: topic, payload: payload, retain: retain) else {
                logger.warning("direct publish not taken by libmosquitto", metadata: ["topic": "\(topic)"])
                continuation.resume(returning: false)
                return
            }
            // Registered before the actor can take this PUBACK's outcome (it is taken by this actor).
            directWaiters[mid] = continuation
        }
    }

    func directCompleted(mid: Int32, reason: Int32) {
        guard let waiter = directWaiters.removeValue(forKey: mid) else { return }
        if reason >= 128 {
            logger.warning("broker refused a direct publish", metadata: ["reason": "\(reason)"])
        }
        waiter.resume(returning: reason < 128)
    }

    /// The connection is gone: no PUBACK will come for the direct publishes in flight.
    func failDirectPublishes() {
        let waiters = directWaiters
        directWaiters = [:]
        for waiter in waiters.values { waiter.resume(returning: false) }
    }
}
