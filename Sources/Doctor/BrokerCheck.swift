import GatewayConfig
import Logging
import MQTTPublisher
import TextTools

/// The broker is reachable and accepts the credentials and TLS settings (`broker`), and a QoS 1,
/// non-retained test publish under the topic prefix gets its PUBACK (`publish`).
///
/// The probe connects with the gateway's own `PublisherConfiguration` (host, port, user,
/// password, TLS files) under the client id `<clientId>-doctor`, so a running gateway keeps
/// its connection and its session.
enum BrokerCheck {
    /// Every broker of `mqtt.hosts` in turn: a fallback that cannot take over is found before it is
    /// needed. The checks of the second broker on are named `broker 2`, `publish 2`, and so on.
    static func run(_ configuration: GatewayConfiguration, timeout: Duration, logger: Logger) async -> [CheckResult] {
        var results: [CheckResult] = []
        for (index, endpoint) in configuration.mqtt.brokers.enumerated() {
            var publisher = PublisherConfiguration(configuration)
            publisher.host = endpoint.host
            publisher.port = endpoint.port
            let checks = await run(configuration, publisher: publisher, broker: "\(endpoint)", timeout: timeout, logger: logger)
            results += index == 0 ? checks : checks.map { CheckResult("\($0.check) \(index + 1)", $0.outcome) }
        }
        return results
    }

    static func run(_ configuration: GatewayConfiguration, publisher: PublisherConfiguration, broker: String, timeout: Duration,
                    logger: Logger) async -> [CheckResult] {
        let mqtt = configuration.mqtt
        let topic = testTopic(configuration)
        let payload = Array(#"{"doctor":true,"gateway":"\#(jsonEscaped(configuration.gatewayId))"}"#.utf8)
        logger.debug("probing the broker", metadata: ["broker": "\(broker)", "topic": "\(topic)"])
        let outcome = await BrokerProbe.run(publisher, clientId: "\(publisher.clientId)-doctor", topic: topic, payload: payload, timeout: timeout)
        logger.debug("broker probe done", metadata: ["outcome": "\(outcome)"])

        var how = mqtt.tls == nil ? "plain TCP" : "TLS"
        how += mqtt.username.map { ", user \($0)" } ?? ", anonymous"
        func connected(_ version: BrokerProbe.ProtocolVersion) -> CheckResult {
            .ok("broker", "connected to \(broker) (MQTT \(version.rawValue), \(how))")
        }
        switch outcome {
        case .connectFailed(let error):
            return [.problem("broker", problem(for: error, broker: broker, username: mqtt.username))]
        case .acknowledged(.v5):
            return [connected(.v5), .ok("publish", "PUBACK for \(topic) (QoS 1, not retained)")]
        case .acknowledged(.v311):
            return [connected(.v311), .problem("publish", .aclUnverifiable(topic: topic, prefix: mqtt.topicPrefix))]
        case .publishRefused(let code, let reason):
            let problem: DoctorProblem = code == 135
                ? .publishNotAuthorized(topic: topic, prefix: mqtt.topicPrefix, username: mqtt.username)
                : .publishRefused(topic: topic, reasonCode: code, reason: reason)
            return [connected(.v5), .problem("publish", problem)]
        case .publishFailed(let error, let version):
            return [connected(version), .problem("publish", .publishUnacknowledged(topic: topic, reason: error.message))]
        }
    }

    /// `<prefix>gyrogate/<gatewayId>/doctor`, next to the presence topic.
    static func testTopic(_ configuration: GatewayConfiguration) -> String {
        "\(configuration.mqtt.topicPrefix)gyrogate/\(configuration.gatewayId)/doctor"
    }

    static func problem(for error: MQTTError, broker: String, username: String?) -> DoctorProblem {
        switch error.kind {
        case .unreachable: .brokerUnreachable(broker: broker, reason: error.message)
        case .tls: .brokerTLS(broker: broker, reason: error.message)
        case .notAuthorized: .brokerCredentialsRejected(broker: broker, username: username, reason: "\(error.message) (\(error.code))")
        case .refused, .unsupportedProtocol, .connectionLost, .publishFailed: .brokerRefused(broker: broker, reason: "\(error.message) (\(error.code))")
        }
    }

    private static func jsonEscaped(_ text: String) -> String {
        text.replacingEvery("\\", with: "\\\\").replacingEvery("\"", with: "\\\"")
    }
}
