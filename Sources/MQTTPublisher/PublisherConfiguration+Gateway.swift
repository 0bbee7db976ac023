import GatewayConfig

/// The publisher's settings as a gateway's configuration gives them; the daemon and `gyrogate doctor`
/// (which probes the broker as the gateway would) both start from here.
extension PublisherConfiguration {
    public init(_ configuration: GatewayConfiguration, version: String = gyrogateVersion) {
        let mqtt = configuration.mqtt
        self.init(host: mqtt.host, port: mqtt.port, clientId: mqtt.clientId, gatewayId: configuration.gatewayId, version: version,
                  username: mqtt.username, password: mqtt.password?.value,
                  tls: mqtt.tls.map { TLSFiles(caFile: $0.caFile, certFile: $0.certFile, keyFile: $0.keyFile) },
                  topicPrefix: mqtt.topicPrefix, keepaliveSeconds: mqtt.keepaliveSeconds)
        fallbackBrokers = mqtt.fallbackBrokers
        failbackInterval = .seconds(mqtt.failbackSeconds)
        sessionExpirySeconds = UInt32(clamping: mqtt.sessionExpirySeconds)
        messageExpirySeconds = mqtt.messageExpirySeconds > 0 ? UInt32(clamping: mqtt.messageExpirySeconds) : nil
    }
}
