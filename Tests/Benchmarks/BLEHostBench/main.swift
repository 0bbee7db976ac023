// ble-host-bench: the whole host (H4/TCP transport, BLEHost, GATT client) against the bumble
// MetaWear peer streaming gyro at 3200 Hz unpacked on several sensors at once.
//
//   swift run -c release ble-host-bench [--sensors 4] [--seconds 10] [--odr-config 0x2d]
//                                       [--transport tcp:127.0.0.1:PORT]  (else it starts the peer)
//
// Every notification carries x = int16(n), n the sample counter from 0 at the start command, so
// a lost notification is a jump and a reordered one goes backwards. Reports per sensor and in
// total: received, lost, reordered, rate, and this process's CPU time. The peer is Python and
// shares the 2 cores; its own ceiling is ~3,200/s per sensor (Tests/Peers/README.md).
import BLEHost
import BluetoothWire
import MetaWear
import Foundation
import Logging

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let sensorCount = Int(option("--sensors") ?? "") ?? 4
let seconds = Double(option("--seconds") ?? "") ?? 10
let odrConfig = UInt8((option("--odr-config") ?? "0x2d").dropFirst(2), radix: 16) ?? 0x2D
let odr = 25.0 * pow(2.0, Double(Int(odrConfig & 0x0F) - 6))

var logger = Logger(label: "ble-host-bench")
logger.logLevel = Logger.Level(rawValue: ProcessInfo.processInfo.environment["LOG_LEVEL"] ?? "warning") ?? .warning

/// Starts the peer unless --transport is given; returns the transport string and the process.
func startPeer() throws -> (String, Process?) {
    if let transport = option("--transport") { return (transport, nil) }
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    let python = ProcessInfo.processInfo.environment["GYROGATE_PEER_PYTHON"] ?? root.appendingPathComponent(".venv/bin/python").path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.currentDirectoryURL = root.appendingPathComponent("Tests/Peers")
    process.arguments = ["metawear_peer.py", "--hci-port", "0", "--control-port", "0", "--sensors", "\(sensorCount)", "--exit-with-parent"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    var line = Data()
    while true {
        let byte = output.fileHandleForReading.readData(ofLength: 1)
        if byte.isEmpty || byte.first == UInt8(ascii: "\n") { break }
        line.append(byte)
    }
    let text = String(decoding: line, as: UTF8.self)
    guard let hci = text.split(separator: " ").first(where: { $0.hasPrefix("hci=") }) else {
        throw BLEHostError.invalidParameter("peer did not start (\(python)): \(text)")
    }
    return ("tcp:127.0.0.1:\(hci.dropFirst(4))", process)
}

struct SensorResult: Sendable {
    var address: BluetoothAddress
    var received = 0
    var lost = 0
    var reordered = 0
    var firstX: Int16?
    var elapsed: Duration = .zero
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

let metaWearService = try BluetoothUUID(parsing: MetaWearUUIDs.service)
let commandUUID = BluetoothUUID(high: 0x326A_9001_85CB_9195, low: 0xD9DD_464C_FBBA_E75A)
let notifyUUID = BluetoothUUID(high: 0x326A_9006_85CB_9195, low: 0xD9DD_464C_FBBA_E75A)

let (spec, peer) = try startPeer()
let host = BLEHost(transport: try await TransportFactory.open(spec, logger: logger), logger: logger)
try await host.start()
var sensors: [Advertisement] = []
for _ in 0..<5 where sensors.count < sensorCount {
    sensors = try await host.scan(for: .seconds(1), serviceUUID: metaWearService)
}
sensors = Array(sensors.prefix(sensorCount))
print("ble-host-bench: \(sensors.count) sensor(s) via \(spec), gyro \(odr) Hz unpacked, \(seconds) s")

var connections: [LEConnection] = []
for sensor in sensors {
    connections.append(try await host.connect(to: sensor.address, addressType: sensor.addressType))
}
let cpuBefore = cpuSeconds()
let results = try await withThrowingTaskGroup(of: SensorResult.self) { group in
    for connection in connections {
        group.addTask {
            let gatt = connection.gatt
            _ = try await gatt.exchangeMTU(65)
            let service = try await gatt.discoverPrimaryServices().first { $0.uuid == metaWearService }!
            let characteristics = try await gatt.discoverCharacteristics(of: service)
            let command = characteristics.first { $0.uuid == commandUUID }!
            let notify = characteristics.first { $0.uuid == notifyUUID }!
            let stream = try await gatt.subscribe(notify)
            for bytes: [UInt8] in [[0x13, 0x03, odrConfig, 0x00], [0x13, 0x05, 0x01], [0x13, 0x02, 0x01, 0x00], [0x13, 0x01, 0x01]] {
                try await gatt.write(command, bytes, withResponse: true)
            }
            var result = SensorResult(address: connection.peer)
            let clock = ContinuousClock()
            let start = clock.now
            let end = start.advanced(by: .milliseconds(Int(seconds * 1000)))
            var last: Int16?
            for await value in stream {
                guard value.count == 8, value[0] == 0x13, value[1] == 0x05 else { continue }
                let x = Int16(bitPattern: UInt16(value[2]) | UInt16(value[3]) << 8)
                if let previous = last {
                    let step = Int(x &- previous)
                    if step > 1 { result.lost += step - 1 } else if step < 1 { result.reordered += 1 }
                } else {
                    result.firstX = x
                    if x != 0 { result.lost += Int(x) }
                }
                last = x
                result.received += 1
                if clock.now >= end { break }
            }
            result.elapsed = clock.now - start
            for bytes: [UInt8] in [[0x13, 0x01, 0x00], [0x13, 0x02, 0x00, 0x01], [0x13, 0x05, 0x00]] {
                try await gatt.write(command, bytes, withResponse: true)
            }
            return result
        }
    }
    var all: [SensorResult] = []
    for try await result in group { all.append(result) }
    return all.sorted { $0.address < $1.address }
}
let cpu = cpuSeconds() - cpuBefore
var total = 0
var totalLost = 0
var totalReordered = 0
var wall = 0.0
for result in results {
    let elapsed = Double(result.elapsed.components.seconds) + Double(result.elapsed.components.attoseconds) / 1e18
    wall = max(wall, elapsed)
    total += result.received
    totalLost += result.lost
    totalReordered += result.reordered
    print(String(format: "  %@: %7d notifications, %5d lost, %3d reordered, %7.0f/s (wanted %.0f/s)",
                 "\(result.address)", result.received, result.lost, result.reordered, Double(result.received) / elapsed, odr))
}
let status = await host.status()
print(String(format: "total: %d notifications in %.1f s = %.0f/s (wanted %.0f/s), lost %d, reordered %d; host CPU %.1f s (%.0f%% of one core); malformed %d, unknown %d",
             total, wall, Double(total) / wall, odr * Double(results.count), totalLost, totalReordered, cpu, 100 * cpu / wall,
             status.malformedPackets, status.unknownPackets))
for connection in connections { await connection.disconnect() }
await host.stop()
peer?.terminate()
exit(totalLost == 0 && totalReordered == 0 && total > 0 ? 0 : 1)
