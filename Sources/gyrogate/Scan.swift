import ArgumentParser
import BLEHost
import BluetoothWire
import GatewayConfig
import JSON
import Logging
import Sensors

struct Scan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List nearby MetaWear sensors (address, name, RSSI) through the configured controller.")

    @Option(name: .long, help: "Controller: hci:N, tcp:HOST:PORT or serial:/dev/DEVICE:BAUD (default: the configuration's).")
    var transport: String?

    @Option(name: .long, help: "Configuration file: its bluetooth.transport, and its sensors are listed too.")
    var config: String?

    @Option(name: .long, help: "How long to scan.")
    var seconds: Double = 5

    @Flag(name: .long, help: "List every advertiser, not only MetaWear sensors.")
    var all = false

    @Flag(name: .long, help: "Print JSON for scripts.")
    var json = false

    func run() async throws {
        guard seconds > 0, seconds <= 600 else { throw ValidationError("--seconds must be in 0...600") }
        let configuration = try config.map(loadConfiguration)
        guard let spec = transport ?? configuration?.bluetooth.transport.description else {
            throw ValidationError("name the controller with --transport or --config")
        }
        var logger = Logger(label: "gyrogate")
        logger.logLevel = Logger.Level(rawValue: Environment.value("LOG_LEVEL") ?? "error") ?? .error
        let known = Set((configuration?.sensors ?? []).compactMap { try? BluetoothAddress(parsing: $0.address) })
        let found: [Advertisement]
        var standardError = StandardError()
        do {
            let host = BLEHost(transport: try await TransportFactory.open(spec, logger: logger), logger: logger)
            do {
                try await host.start()
                found = try await host.scan(for: .milliseconds(Int(seconds * 1000)),
                                            serviceUUID: all ? nil : GATTMetaWearLink.serviceUUID,
                                            addresses: all ? [] : known)
            } catch {
                await host.stop()
                throw error
            }
            await host.stop()
        } catch {
            print("gyrogate scan: \(error)", to: &standardError)
            throw ExitCode(69)
        }
        if json {
            printJSON(.array(found.map { advertisement in
                ["address": .string("\(advertisement.address)"), "addressType": advertisement.addressType == .public ? "public" : "random",
                 "name": advertisement.name.jsonValue, "rssi": Int(advertisement.rssi).jsonValue,
                 "connectable": .bool(advertisement.isConnectable), "configured": .bool(known.contains(advertisement.address)),
                 "metawear": .bool(advertisement.serviceUUIDs.contains(GATTMetaWearLink.serviceUUID))]
            }))
            return
        }
        if found.isEmpty {
            print("no \(all ? "advertisers" : "MetaWear sensors") found in \(seconds) s on \(spec)")
            return
        }
        var table = Table(headers: ["ADDRESS", "TYPE", "NAME", "RSSI", "CONFIGURED"])
        for advertisement in found {
            table.rows.append(["\(advertisement.address)", advertisement.addressType == .public ? "public" : "random",
                               advertisement.name ?? "-", "\(advertisement.rssi) dBm",
                               known.contains(advertisement.address) ? "yes" : ""])
        }
        print(table.render())
    }
}
