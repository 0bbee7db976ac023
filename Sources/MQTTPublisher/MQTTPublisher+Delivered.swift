import GyroStore

/// Waiting for the rows the outbox holds now, not for an empty outbox.
///
/// Why: a session hand-off must reach the broker after the releasing gateway's last documents of
/// the session (docs/fleet.md). Waiting for the publisher to be idle (`waitUntilIdle()`) also
/// waits for every row committed after the release, and a gateway that captures other boards
/// commits new rows every few seconds: under load it was idle too rarely, and the hand-off came
/// after the next gateway had stopped waiting for it (a new session began instead).
extension MQTTPublisher {
    /// Returns once every row the outbox holds when called (parked rows aside) has been
    /// acknowledged or refused by the broker, or passed over as superseded, on a live
    /// connection; also when the publisher stops, or the outbox cannot be read (logged).
    public func waitUntilDelivered() async {
        do {
            guard let last = try await store.lastDeliverableSeq() else { return }
            await waitUntilDelivered(through: last)
        } catch {
            logger.error("cannot read the outbox; not waiting for its delivery", metadata: ["error": "\(error)"])
        }
    }

    /// Returns once the rows up to outbox seq `target` are delivered, as above.
    public func waitUntilDelivered(through target: Int64) async {
        guard phase != .stopped, !isDelivered(through: target) else { return }
        await withCheckedContinuation { deliveryWaiters.append((target, $0)) }
    }

    /// Rows up to `target` were read by a feeder of this connection (so sent or superseded),
    /// or the feeder found nothing more to read (rows no longer in the outbox were acknowledged),
    /// and none of them is still queued or awaiting its PUBACK (as of the window's last report,
    /// which can only be late, never early).
    func isDelivered(through target: Int64) -> Bool {
        connected && (fetchCursor >= target || exhausted) && lowestPendingSeq.map { $0 > target } ?? true
    }

    func resumeDeliveryWaiters(force: Bool = false) {
        guard !deliveryWaiters.isEmpty else { return }
        var waiting: [(target: Int64, continuation: CheckedContinuation<Void, Never>)] = []
        for waiter in deliveryWaiters {
            if force || isDelivered(through: waiter.target) { waiter.continuation.resume() } else { waiting.append(waiter) }
        }
        deliveryWaiters = waiting
    }
}
