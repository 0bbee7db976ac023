import ArgumentParser

@main
struct Gyrogate: AsyncParsableCommand {
    static let version = "0.1.0"
    static let configuration = CommandConfiguration(
        commandName: "gyrogate",
        abstract: "Captures MetaWear motion data over Bluetooth LE into a local store and publishes it to MQTT.",
        version: version,
        subcommands: [Run.self, Scan.self, CheckConfig.self, DoctorCommand.self, Status.self, Sensors.self, Sessions.self, Session.self, Medals.self, Documents.self, ExportCommand.self, StoreCommand.self, Resync.self]
    )
}
