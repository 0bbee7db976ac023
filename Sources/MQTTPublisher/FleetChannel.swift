import CMosquitto
import Dispatch
import GatewayConfig
import Glibc
import Logging
import PosixThreads

/// The fleet's coordination connection: a second MQTT client of its own (client id
/// `<clientId>-fleet`), apart from the publisher's, with a short keep-alive and a last will, so
/// that a gateway that dies is declared offline within seconds while the publisher's session
/// keeps its own, longer, keep-alive. It subscribes to `gyrogate/fleet/+` (under the topic
/// prefix) and keeps this gateway's report retained there.
///
/// Nothing here is stored: every report is current state, published again (retained) at every
/// connection, so a plain QoS 1 connection that starts over suffices; the outbox is not involved.
/// Brokers are tried in the configured order, the next after a failed attempt.
///
/// Threading: one thread of its own connects and runs `mosquitto_loop`; callbacks run there
/// and call the handlers. ``publish(_:)`` may be called from any thread.
public final class FleetChannel: @unchecked Sendable {
    public struct Handlers: Sendable {
        public var connected: @Sendable (Bool) -> Void
        /// A report of the gateway named by the topic's last level (an empty payload: removed).
        public var report: @Sendable (_ gateway: String, _ payload: [UInt8]) -> Void
        /// A session hand-off for the sensor named by the topic's last level (empty: taken).
        public var handoff: @Sendable (_ sensor: String, _ payload: [UInt8]) -> Void
        public init(connected: @escaping @Sendable (Bool) -> Void, report: @escaping @Sendable (String, [UInt8]) -> Void,
                    handoff: @escaping @Sendable (String, [UInt8]) -> Void = { _, _ in }) {
            self.connected = connected
            self.report = report
            self.handoff = handoff
        }
    }

    final class Context: @unchecked Sendable {
        let handlers: Handlers
        let topicRoot: String
        weak var channel: FleetChannel?
        init(handlers: Handlers, topicRoot: String) {
            self.handlers = handlers
            self.topicRoot = topicRoot
        }
    }

    let configuration: PublisherConfiguration
    let keepAliveSeconds: Int
    let logger: Logger
    /// `<prefix>gyrogate/fleet/`: each gateway's report is at `topicRoot + gatewayId`.
    public let topicRoot: String
    /// Under `topicRoot`, the level of session hand-offs: `…/fleet/handoff/<sensor>` (published
    /// by the releasing gateway's publisher, after its outbox).
    public static let handoffLevel = "handoff/"
    /// The topic of `sensor`'s session hand-off.
    public static func handoffTopic(prefix: String, sensor: String) -> String { prefix + "gyrogate/fleet/" + handoffLevel + sensor }
    let handle: OpaquePointer
    let context: Unmanaged<Context>
    /// The report to keep retained, and whether the thread should end (after sending `latest`).
    private let state = LockedState((latest: [UInt8]?.none, connected: false, stopping: false, lastMid: Int32(-1), acked: Int32(-1)))
    private let running = DispatchGroup()
    private let sending = LockedState(())

    public init?(configuration: PublisherConfiguration, keepAliveSeconds: Int, will: [UInt8], handlers: Handlers,
                 logger: Logger) throws(MQTTError) {
        _ = MosquittoConnection.libraryReady
        var logger = logger
        logger[metadataKey: "subsystem"] = "fleet"
        self.logger = logger
        self.configuration = configuration
        self.keepAliveSeconds = keepAliveSeconds
        topicRoot = configuration.topicPrefix + "gyrogate/fleet/"
        let context = Unmanaged.passRetained(Context(handlers: handlers, topicRoot: topicRoot))
        guard let handle = mosquitto_new(configuration.clientId + "-fleet", true, context.toOpaque()) else {
            context.release()
            return nil
        }
        self.handle = handle
        self.context = context
        mosquitto_threaded_set(handle, true)
        if let error = MosquittoConnection.applyCredentials(handle, configuration) {
            mosquitto_destroy(handle)
            context.release()
            throw error
        }
        let topic = topicRoot + configuration.gatewayId
        let rc = will.withUnsafeBytes { mosquitto_will_set(handle, topic, Int32($0.count), $0.baseAddress, 1, true) }
        if rc != Int32(MOSQ_ERR_SUCCESS.rawValue) {
            mosquitto_destroy(handle)
            context.release()
            throw MQTTError(kind: .refused, message: "fleet last will rejected: \(String(cString: mosquitto_strerror(rc)))", code: rc)
        }
        context.takeUnretainedValue().channel = self
        installCallbacks()
    }

    private func installCallbacks() {
        mosquitto_connect_callback_set(handle) { handle, userdata, rc in
            let context = Unmanaged<Context>.fromOpaque(userdata!).takeUnretainedValue()
            guard rc == 0, let handle else {
                context.channel?.refused(rc)
                return
            }
            mosquitto_subscribe(handle, nil, context.topicRoot + "+", 1)
            mosquitto_subscribe(handle, nil, context.topicRoot + FleetChannel.handoffLevel + "+", 1)
            context.channel?.connected(true)
        }
        mosquitto_message_callback_set(handle) { _, userdata, message in
            let context = Unmanaged<Context>.fromOpaque(userdata!).takeUnretainedValue()
            guard let message, let topicPointer = message.pointee.topic else { return }
            let topic = String(cString: topicPointer)
            guard topic.hasPrefix(context.topicRoot) else { return }
            var name = Substring(topic.dropFirst(context.topicRoot.count))
            let isHandoff = name.hasPrefix(FleetChannel.handoffLevel)
            if isHandoff { name = name.dropFirst(FleetChannel.handoffLevel.count) }
            guard !name.isEmpty, !name.contains("/") else { return }
            let length = Int(max(0, message.pointee.payloadlen))
            let payload = message.pointee.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
            if isHandoff { context.handlers.handoff(String(name), payload) } else { context.handlers.report(String(name), payload) }
        }
        mosquitto_publish_callback_set(handle) { _, userdata, mid in
            Unmanaged<Context>.fromOpaque(userdata!).takeUnretainedValue().channel?.acknowledged(mid)
        }
    }

    /// Keeps `report` retained as this gateway's; sent now when connected, else at the next connection.
    public func publish(_ report: [UInt8]) {
        state.withLock { $0.latest = report }
        sendLatest()
    }

    /// Starts the connection's thread.
    public func start() {
        running.enter()
        let started = DetachedThread.start(name: "mqtt-fleet") { [self] in
            defer { running.leave() }
            run()
        }
        if !started {
            running.leave()
            logger.error("fleet coordination: no thread for its connection; every sensor is tried as by a lone gateway")
        }
    }

    /// Publishes `final` (this gateway's offline report) and waits up to 2 s for its PUBACK, then
    /// disconnects (no will: the report said it) and ends the thread. Blocking.
    public func stop(final: [UInt8]) {
        // Stopping first: the final report's publish wakes the loop, which then sees it.
        let connected = state.withLock { state -> Bool in
            state.latest = final
            state.stopping = true
            return state.connected
        }
        // Not connected: a loop waiting for CONNACK is woken by the DISCONNECT.
        if connected { sendLatest() } else { mosquitto_disconnect(handle) }
        // A thread still inside a blocking connect (a broker that drops SYNs) ends when the
        // connect gives up; shutdown does not wait for that. The handle is then left to the exit.
        guard running.wait(timeout: .now() + 3) == .success else {
            logger.warning("fleet coordination: the connection's thread did not end within 3 s; leaving it")
            return
        }
        mosquitto_destroy(handle)
        context.release()
    }

    // MARK: - The connection's thread

    private func run() {
        var index = 0
        var failures = 0
        let brokers = configuration.brokers
        while !stopping {
            let broker = brokers[index % brokers.count]
            let rc = mosquitto_connect(handle, broker.host, Int32(broker.port), Int32(keepAliveSeconds))
            if rc == Int32(MOSQ_ERR_SUCCESS.rawValue) {
                failures = 0
                loopUntilEnded()
                let wasConnected = state.withLock { state -> Bool in
                    defer { state.connected = false }
                    return state.connected
                }
                if wasConnected { context.takeUnretainedValue().handlers.connected(false) }
                if stopping { break }
            } else {
                failures += 1
                index += 1
                if failures == 1 || failures % 10 == 0 {
                    logger.warning("fleet coordination: cannot reach the broker; retrying", metadata: [
                        "broker": "\(broker)", "error": "\(String(cString: mosquitto_strerror(rc)))", "attempts": "\(failures)",
                    ])
                }
            }
            // Capped back-off between rounds of attempts, in short naps so that stop() is prompt.
            let naps = min(50, 5 << min(failures, 4))
            for _ in 0..<naps where !stopping { usleep(100_000) }
        }
    }

    /// Runs the network loop until the connection ends; when stopping, until the final report is
    /// acknowledged (at most 2 s), then disconnects.
    private func loopUntilEnded() {
        var stoppingRounds = 0
        // Wakes when a report is queued or the broker sends one (libmosquitto's socket pair) and
        // for the keep-alive's ping; a shorter timeout would only wake the thread for nothing
        // (ten times a second: as much CPU as the data plane at 4 x 100 Hz).
        let idleMs = Int32(clamping: keepAliveSeconds * 1000)
        while true {
            let rc = mosquitto_loop(handle, stopping ? 100 : idleMs, 1)
            if rc != Int32(MOSQ_ERR_SUCCESS.rawValue) { return }
            if stopping {
                stoppingRounds += 1
                let done = state.withLock { $0.acked == $0.lastMid || !$0.connected }
                if done || stoppingRounds > 20 {
                    mosquitto_disconnect(handle)
                    _ = mosquitto_loop(handle, 100, 1)
                    return
                }
            }
        }
    }

    private var stopping: Bool { state.withLock { $0.stopping } }

    fileprivate func connected(_ up: Bool) {
        state.withLock { $0.connected = up }
        if up { sendLatest() }
        context.takeUnretainedValue().handlers.connected(up)
    }

    fileprivate func refused(_ rc: Int32) {
        logger.warning("fleet coordination: the broker refused the connection; retrying", metadata: [
            "reason": "\(String(cString: mosquitto_connack_string(rc)))",
        ])
    }

    fileprivate func acknowledged(_ mid: Int32) {
        state.withLock { $0.acked = mid }
    }

    /// Sends the newest report when connected. Sends are serialised and each takes the report
    /// current when it runs, so the broker's retained report is never an older one sent late
    /// (a connection's first send racing a publish of a newer report).
    private func sendLatest() {
        sending.withLock { _ in
            let (latest, connected) = state.withLock { ($0.latest, $0.connected) }
            if connected, let latest { send(latest) }
        }
    }

    private func send(_ report: [UInt8]) {
        var mid: Int32 = 0
        let topic = topicRoot + configuration.gatewayId
        let rc = report.withUnsafeBytes { mosquitto_publish(handle, &mid, topic, Int32($0.count), $0.baseAddress, 1, true) }
        if rc == Int32(MOSQ_ERR_SUCCESS.rawValue) { state.withLock { $0.lastMid = mid } }
    }
}
