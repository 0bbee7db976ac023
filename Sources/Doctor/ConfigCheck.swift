import GatewayConfig

/// The configuration loads and validates (the same loader as `gyrogate run`).
enum ConfigCheck {
    static func load(_ path: String, environment: [String: String]) -> Result<GatewayConfiguration, DoctorProblem> {
        do {
            return .success(try GatewayConfiguration.load(path: path, environment: environment))
        } catch {
            switch error {
            case .unreadable(_, let reason): return .failure(.configUnreadable(path: path, reason: reason))
            case .notJSON(_, let reason): return .failure(.configNotJSON(path: path, reason: reason))
            case .invalid(let problems): return .failure(.configInvalid(path: path, problems: problems))
            }
        }
    }

    static func summary(_ path: String, _ configuration: GatewayConfiguration) -> String {
        "\(path): gateway \(configuration.gatewayId), transport \(configuration.bluetooth.transport), "
            + "broker \(configuration.mqtt.host):\(configuration.mqtt.port)"
    }
}
