import CMosquitto
import GyroStore
import Logging

/// Graceful stop: the rows in the outbox are delivered and acknowledged within the shutdown grace
/// (capture's final documents, committed just before: the closed sessions' records), then the
/// offline status and a clean DISCONNECT. Rows not acknowledged in time stay in the outbox.
extension MQTTPublisher {
    func beginShutdown() async {
        guard phase == .running else { return }
        status.state = .stopping
        guard connected else {
            phase = .stopped
            return
        }
        phase = .draining
        logger.info("stopping: delivering what is left in the outbox", metadata: ["inFlight": "\(windowed)"])
        scheduleShutdownTimeout()
        // Rows committed since the last pass (the final documents) are looked for again, also by
        // a pass already reading: its snapshot may predate them, so it cannot end the drain.
        outboxVersion &+= 1
        exhausted = false
        await fill()
        await shutdownProgress()
    }

    func scheduleShutdownTimeout() {
        yield(.shutdownTimeout, after: configuration.shutdownGrace)
    }

    /// Goes offline once the outbox is drained and acknowledged, or at once when `force`d (the grace
    /// ran out): no further rows are handed over.
    func shutdownProgress(force: Bool = false) async {
        guard phase == .draining else { return }
        guard force || (windowed == 0 && queued == 0 && !fetching && exhausted) else { return }
        if let connection {
            fetchEpoch += 1
            _ = connection.window.replaceQueue(with: [], admitting: fetchEpoch)
        }
        await flushAcks()
        if let mid = publishPresence(online: false) {
            phase = .goingOffline(mid: mid)
            scheduleShutdownTimeout()
        } else {
            phase = .stopped
        }
    }

    func shutdownTimedOut() async {
        switch phase {
        case .draining:
            logger.warning("stopping with rows not delivered or acknowledged; they stay in the outbox", metadata: ["inFlight": "\(windowed)"])
            windowed = 0
            await shutdownProgress(force: true)
        case .goingOffline:
            phase = .stopped
        default:
            break
        }
    }

    func finish() async {
        await flushAcks()
        cancelTimers()
        phase = .stopped
        connected = false
        status.state = .stopped
        status.connectedSince = nil
        status.inFlight = 0
        failDirectPublishes()
        if let connection {
            // Clean DISCONNECT: the broker does not send the will (offline was published above).
            self.connection = nil
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in connection.closeInBackground { done.resume() } }
        }
        continuation.finish()
        resumeIdleWaiters(force: true)
        logger.info("publisher stopped", metadata: ["published": "\(status.published)", "acknowledged": "\(status.acknowledged)"])
    }
}
