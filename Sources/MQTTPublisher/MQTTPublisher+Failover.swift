import GatewayConfig
import Logging

/// Several brokers (`mqtt.hosts`): the first that answers, in order of preference, and back to an
/// earlier one once it answers again.
///
/// - A failure moves to the next broker at once; a round in which every broker failed waits for
///   the backoff before the next. The rows not acknowledged stay in the outbox and go to the next
///   broker: at-least-once, as on a reconnect to the same one.
/// - A connection accepted by a broker other than the last one re-asserts every retained document
///   whatever CONNACK's session-present says: the outbox rows acknowledged by the other broker
///   are gone, so a broker that kept our session may still lack what was published meanwhile.
/// - On a fallback broker, the earlier ones are tried (a TCP connect) every `failbackInterval`.
///   When one answers, no further rows are handed over, the window's PUBACKs are awaited (at most
///   `shutdownGrace`), "offline" is published on the broker being left, and the connection moves:
///   a row is never in flight on two brokers, so going back publishes nothing twice.
extension MQTTPublisher {
    /// The broker the current (or next) connection is for.
    var broker: BrokerEndpoint { configuration.brokers[brokerIndex] }

    /// After a failure: the broker to try next and how long to wait before trying it.
    func nextBroker(afterConnectedLink wasConnected: Bool) -> Duration {
        let count = configuration.brokers.count
        guard count > 1 else { return backoff(failedAttempts) }
        brokerIndex = (brokerIndex + 1) % count
        // Every broker failed since the last success: back off as a single broker would.
        if brokerIndex == 0 && !wasConnected { return backoff(max(1, failedAttempts / count)) }
        return configuration.reconnectMinimum
    }

    /// A connection was accepted: whether it needs every retained document again.
    func acceptedNeedsResync(sessionPresent: Bool) -> Bool {
        defer { lastAcceptedBroker = brokerIndex }
        if let last = lastAcceptedBroker, last != brokerIndex {
            status.failovers += 1
            logger.notice("now publishing to another broker; re-asserting the retained documents",
                          metadata: ["from": "\(configuration.brokers[last])", "to": "\(broker)"])
            return true
        }
        return !sessionPresent
    }

    /// On a fallback broker: looks for an earlier one after `failbackInterval`.
    func scheduleFailback() {
        guard brokerIndex > 0 else { return }
        yield(.failbackDue(generation: generation), after: configuration.failbackInterval)
    }

    /// Tries the brokers before the current one, in order, off the actor.
    func probeEarlierBrokers(generation: Int) {
        guard generation == self.generation, connected, phase == .running, brokerIndex > 0, failbackTarget == nil else { return }
        let candidates = Array(configuration.brokers.prefix(brokerIndex)), continuation = self.continuation
        BrokerReachability.firstReachable(candidates, timeoutMs: 2000) { index in
            continuation.yield(.failbackProbed(generation: generation, index: index))
        }
    }

    func failbackProbed(generation: Int, index: Int?) async {
        guard generation == self.generation, connected, phase == .running, failbackTarget == nil else { return }
        guard let index else {
            scheduleFailback()
            return
        }
        logger.info("an earlier broker answers; going back to it once the publishes in flight are acknowledged",
                    metadata: ["broker": "\(configuration.brokers[index])", "inFlight": "\(windowed)"])
        failbackTarget = index
        // Nothing further is handed over: the resync queue and the feeder stop here.
        if let connection {
            fetchEpoch += 1
            _ = connection.window.replaceQueue(with: [], admitting: fetchEpoch)
        }
        yield(.failbackTimeout(generation: generation), after: configuration.shutdownGrace)
        await failbackProgress()
    }

    /// Moves to the target broker once nothing is in flight, or at once when `force`d.
    func failbackProgress(force: Bool = false) async {
        guard let target = failbackTarget, connected else { return }
        guard force || (windowed == 0 && !fetching) else { return }
        if force { logger.warning("going back with publishes not acknowledged; they are sent again there", metadata: ["inFlight": "\(windowed)"]) }
        failbackTarget = nil
        await flushAcks()
        _ = publishPresence(online: false)
        teardown()
        brokerIndex = target
        failedAttempts = 0
        connect()
    }

    func failbackTimedOut(generation: Int) async {
        guard generation == self.generation, failbackTarget != nil else { return }
        await failbackProgress(force: true)
    }
}
