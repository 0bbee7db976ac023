import ArgumentParser
import Daemon
import GatewayConfig
import Logging

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the gateway daemon.")

    @Option(name: .long, help: "Path of the configuration file.")
    var config: String = "config.json"

    func run() async throws {
        let configuration = try loadConfiguration(config)
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = Logger.Level(rawValue: Environment.value("LOG_LEVEL") ?? "info") ?? .info
            return handler
        }
        let logger = Logger(label: "gyrogate")
        do {
            var daemon = try GatewayDaemon(configuration: configuration, logger: logger)
            daemon.version = Gyrogate.version
            try await daemon.run()
        } catch {
            logger.critical("gyrogate stopped", metadata: ["subsystem": "daemon", "error": "\(error)"])
            throw ExitCode(1)
        }
    }
}

struct CheckConfig: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "check-config", abstract: "Validate a configuration file and list every problem.")

    @Argument(help: "Path of the configuration file.")
    var path: String

    func run() async throws {
        let configuration = try loadConfiguration(path)
        print("\(path): ok (gateway \(configuration.gatewayId), transport \(configuration.bluetooth.transport), broker \(configuration.mqtt.host):\(configuration.mqtt.port))")
    }
}

/// Loads a configuration or prints one line per problem to standard error and exits with 78 (EX_CONFIG).
func loadConfiguration(_ path: String) throws -> GatewayConfiguration {
    do {
        return try GatewayConfiguration.load(path: path)
    } catch {
        var standardError = StandardError()
        // A file-level problem already names the file; a key's problem gets it in front.
        for problem in error.problems { print(problem.path.isEmpty ? problem.message : "\(path): \(problem)", to: &standardError) }
        throw ExitCode(78)
    }
}
