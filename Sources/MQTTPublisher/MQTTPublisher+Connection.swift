import CMosquitto
import FoundationEssentials
import GatewayConfig
import GyroStore
import Logging

/// Connecting, reconnecting with backoff, and failures.
extension MQTTPublisher {
    func connect() {
        generation += 1
        libraryError = nil
        status.state = .connecting
        status.protocolVersion = useV5 ? "5" : "3.1.1"
        guard let connection = MosquittoConnection(configuration: configuration, v5: useV5, generation: generation, continuation: continuation) else {
            continuation.yield(.openFailed(generation: generation, error: MQTTError(kind: .refused, message: "mosquitto_new failed", code: -1)))
            return
        }
        self.connection = connection
        if let error = connection.configure(configuration, will: (configuration.statusTopic, Array(#"{"state":"offline"}"#.utf8))) {
            continuation.yield(.openFailed(generation: generation, error: error))
            return
        }
        status.broker = "\(broker)"
        logger.debug("connecting", metadata: ["broker": "\(broker)", "protocol": "\(status.protocolVersion)"])
        connection.open(configuration, broker: broker)
        // A broker that accepts TCP but never answers (or a black-holed route) must not stall us.
        yield(.connectTimeout(generation: generation), after: configuration.connectTimeout)
    }

    func connectionAccepted(sessionPresent: Bool) async {
        connected = true
        failedAttempts = 0
        status.state = phase == .running ? .connected : .stopping
        status.connectedSince = Date()
        status.connections += 1
        logger.info("connected to broker", metadata: ["broker": "\(broker)",
                                                      "protocol": "\(status.protocolVersion)", "sessionPresent": "\(sessionPresent)"])
        resetDelivery()
        publishPresence(online: true)
        if acceptedNeedsResync(sessionPresent: sessionPresent) {
            await startResync()
            status.resyncs += 1
        }
        scheduleFailback()
        await fill()
    }

    func connectionRefused(_ reason: Int32) async {
        let error = MQTTError.connack(reason, v5: useV5)
        if error.kind == .unsupportedProtocol && useV5 {
            logger.warning("broker refused MQTT v5; falling back to 3.1.1", metadata: ["reason": "\(error)"])
            useV5 = false
            failedAttempts = 0
        }
        await connectionFailed(error)
    }

    /// Tears the connection down, keeps every unacknowledged row, and schedules a retry.
    func connectionFailed(_ error: MQTTError) async {
        let wasConnected = connected
        // A 3.1.1-only broker answers a v5 CONNECT with a short 3.1.1 CONNACK ("unacceptable
        // protocol version") that libmosquitto cannot parse as v5, or just closes the socket.
        if useV5, !wasConnected, error.code == Int32(MOSQ_ERR_PROTOCOL.rawValue) || error.code == Int32(MOSQ_ERR_MALFORMED_PACKET.rawValue) {
            logger.warning("broker did not accept MQTT v5; falling back to 3.1.1", metadata: ["reason": "\(error)"])
            useV5 = false
        }
        teardown()
        await flushAcks()
        record(error, level: wasConnected ? .warning : .error)
        if phase != .running {
            phase = .stopped
            return
        }
        failedAttempts += 1
        failbackTarget = nil
        let delay = nextBroker(afterConnectedLink: wasConnected)
        status.state = .waitingToReconnect
        yield(.reconnectDue(generation: generation), after: delay)
        logger.debug("reconnecting after backoff", metadata: ["delay": "\(delay)", "attempt": "\(failedAttempts)"])
    }

    /// Capped exponential backoff with jitter: a random wait in the upper half of
    /// `min(maximum, minimum * 2^(attempt-1))`.
    func backoff(_ attempt: Int) -> Duration {
        let ceiling = min(configuration.reconnectMaximum, configuration.reconnectMinimum * (1 << min(attempt - 1, 20)))
        return ceiling * Double.random(in: 0.5...1.0)
    }

    func teardown() {
        connected = false
        status.connectedSince = nil
        // A feeder waiting for room on this connection returns.
        connection?.window.halt()
        connection?.closeInBackground()
        connection = nil
        generation += 1
        resetDelivery()
        // Their PUBACKs will not come on this connection.
        failDirectPublishes()
    }

    /// A new connection starts again from the first unacknowledged row.
    func resetDelivery() {
        restartFeed(from: 0)
        queued = 0
        windowed = 0
        lastHandedSeq = 0
        status.inFlight = 0
    }

    func record(_ error: MQTTError, level: Logger.Level) {
        status.lastError = error.snapshot
        status.connectionFailures += 1
        logger.log(level: level, "broker connection failed; will retry", metadata: [
            "broker": "\(broker)", "error": "\(error)", "kind": "\(error.kind.rawValue)",
        ])
    }
}
