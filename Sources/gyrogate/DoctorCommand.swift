import ArgumentParser
import Doctor
import Logging

struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check that the gateway can run here: config, transport, capabilities, broker, data directory, admin socket, clock.",
        discussion: "Prints one line per check (ok, warn or FAIL with a fix) and exits with 0 when no check failed, 1 otherwise. Run it with the gateway stopped: a running gateway holds the Bluetooth adapter.")

    @Option(name: .long, help: "Path of the configuration file.")
    var config: String = "config.json"

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = Logger.Level(rawValue: Environment.value("LOG_LEVEL") ?? "warning") ?? .warning
            return handler
        }
        let report = await GatewayDoctor(logger: Logger(label: "gyrogate")).run(configPath: config)
        for line in report.lines { print(line) }
        if !report.passed { throw ExitCode(report.exitCode) }
    }
}
