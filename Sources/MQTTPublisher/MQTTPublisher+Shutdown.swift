import CMosquitto
import Foundation
import GyroStore
import Logging

/// Graceful stop: no new rows, outstanding PUBACKs awaited briefly, offline status, clean DISCONNECT.
extension MQTTPublisher {
    func beginShutdown() async {
        guard phase == .running else { return }
        status.state = .stopping
        guard connected else {
            phase = .stopped
            return
        }
        phase = .draining
        logger.info("stopping: waiting for outstanding acknowledgements", metadata: ["inFlight": "\(windowed)"])
        scheduleShutdownTimeout()
        // No further rows: only the publishes already handed over are awaited.
        if let connection {
            fetchEpoch += 1
            await apply(connection.window.replaceQueue(with: [], admitting: fetchEpoch))
        } else {
            await shutdownProgress()
        }
    }

    func scheduleShutdownTimeout() {
        let grace = configuration.shutdownGrace
        let continuation = self.continuation
        timers.append(Task {
            try? await Task.sleep(for: grace)
            continuation.yield(.shutdownTimeout)
        })
    }

    func shutdownProgress() async {
        guard phase == .draining, windowed == 0 else { return }
        await flushAcks()
        publishPresence(online: false)
        if case .goingOffline = phase { scheduleShutdownTimeout() }
    }

    func shutdownTimedOut() async {
        switch phase {
        case .draining:
            logger.warning("stopping with unacknowledged publishes; they stay in the outbox", metadata: ["inFlight": "\(windowed)"])
            windowed = 0
            await shutdownProgress()
        case .goingOffline:
            phase = .stopped
        default:
            break
        }
    }

    func finish() async {
        await flushAcks()
        for timer in timers { timer.cancel() }
        timers = []
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
