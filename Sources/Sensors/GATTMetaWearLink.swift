import BLEHost
import BluetoothWire
import MetaWear
import PosixThreads

/// ``MetaWearLink`` over the gateway's own BLE host: an `LEConnection` and its `GATTClient`.
///
/// Created by ``BLEMetaWearConnector/connect(address:timeout:)`` after primary-service and
/// characteristic discovery found the MetaWear service (`326a9000`: command `9001`, notify `9006`)
/// and, if present, Device Information (`180a`).
public final class GATTMetaWearLink: MetaWearLink {
    public let connection: LEConnection
    let command: GATTCharacteristic
    let notify: GATTCharacteristic
    let deviceInformation: [BluetoothUUID: GATTCharacteristic]

    init(connection: LEConnection, command: GATTCharacteristic, notify: GATTCharacteristic,
         deviceInformation: [BluetoothUUID: GATTCharacteristic]) {
        self.connection = connection
        self.command = command
        self.notify = notify
        self.deviceInformation = deviceInformation
    }

    public struct MissingService: Error, CustomStringConvertible {
        public var description: String
    }

    /// Discovers the MetaWear and Device Information characteristics of a fresh connection.
    public static func open(_ connection: LEConnection) async throws -> GATTMetaWearLink {
        let gatt = connection.gatt
        let services = try await gatt.discoverPrimaryServices()
        guard let metaWear = services.first(where: { $0.uuid == serviceUUID }) else {
            throw MissingService(description: "no MetaWear service on \(connection.peer)")
        }
        let characteristics = try await gatt.discoverCharacteristics(of: metaWear)
        guard let command = characteristics.first(where: { $0.uuid == uuid(MetaWearUUIDs.command) }),
              let notify = characteristics.first(where: { $0.uuid == uuid(MetaWearUUIDs.notify) })
        else { throw MissingService(description: "MetaWear service on \(connection.peer) lacks 9001 or 9006") }
        var information: [BluetoothUUID: GATTCharacteristic] = [:]
        if let dis = services.first(where: { $0.uuid == BluetoothUUID(uuid16: 0x180A) }) {
            for characteristic in try await gatt.discoverCharacteristics(of: dis) { information[characteristic.uuid] = characteristic }
        }
        return GATTMetaWearLink(connection: connection, command: command, notify: notify, deviceInformation: information)
    }

    /// The MetaWear service, which every MetaWear advertises: what a scan for sensors filters on.
    public static let serviceUUID = uuid(MetaWearUUIDs.service)

    static func uuid(_ text: String) -> BluetoothUUID {
        let bytes = MetaWearUUIDs.bytes(of: text)!
        let high = bytes[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let low = bytes[8..<16].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return BluetoothUUID(high: high, low: low)
    }

    public var loop: ThreadExecutor { connection.loop }

    public func enableNotifications(receive: @escaping @Sendable (NotificationBatch) -> Void,
                                    ended: @escaping @Sendable () -> Void) async throws {
        try await connection.gatt.subscribe(notify, receiveBatch: receive, ended: ended)
    }

    public func readString(_ characteristicUUID: String) async throws -> String? {
        guard let characteristic = deviceInformation[Self.uuid(characteristicUUID)] else { return nil }
        let bytes = try await connection.gatt.read(characteristic)
        return String(decoding: bytes, as: UTF8.self)
    }

    public func write(_ command: MetaWearCommand) async throws {
        try await connection.gatt.write(self.command, command.bytes, withResponse: command.requiresWriteWithResponse)
    }

    public func requestConnectionInterval(minimumMilliseconds: Double, maximumMilliseconds: Double) async {
        try? await connection.requestConnectionParameters(minIntervalMs: minimumMilliseconds, maxIntervalMs: maximumMilliseconds,
                                                          latency: 0, supervisionTimeoutMs: 4000)
    }

    public func disconnect() async { await connection.disconnect() }

    public func waitForDisconnection() async -> String { "\(await connection.waitForLinkEnd())" }
}

/// Connects to MetaWear boards through a `BLEHost`. The host runs one scan or connection
/// attempt at a time per controller; this adds the address type, learnt from a scan the first
/// time an address is used.
public actor BLEMetaWearConnector: MetaWearConnector {
    public let host: BLEHost
    public var scanDuration: Duration
    private var addressTypes: [BluetoothAddress: BluetoothAddressType] = [:]

    public init(host: BLEHost, scanDuration: Duration = .milliseconds(600)) {
        self.host = host
        self.scanDuration = scanDuration
    }

    public struct NotFound: Error, CustomStringConvertible {
        public var address: String
        public var description: String { "\(address) was not seen advertising" }
    }

    public func connect(address: String, timeout: Duration) async throws -> any MetaWearLink {
        let peer = try BluetoothAddress(parsing: address)
        if addressTypes[peer] == nil {
            let found = try await host.scan(for: scanDuration, addresses: [peer])
            for advertisement in found { addressTypes[advertisement.address] = advertisement.addressType }
        }
        guard let type = addressTypes[peer] else { throw NotFound(address: address) }
        let connection = try await host.connect(to: peer, addressType: type, timeout: timeout)
        do {
            return try await GATTMetaWearLink.open(connection)
        } catch {
            await connection.disconnect()
            throw error
        }
    }

    public func scan(timeout: Duration) async throws -> [String] {
        let found = try await host.scan(for: timeout, serviceUUID: GATTMetaWearLink.serviceUUID)
        for advertisement in found { addressTypes[advertisement.address] = advertisement.addressType }
        return found.map { "\($0.address)" }
    }

    public func sightings(timeout: Duration) async throws -> [String: Int] {
        let found = try await host.scan(for: timeout, serviceUUID: GATTMetaWearLink.serviceUUID)
        for advertisement in found { addressTypes[advertisement.address] = advertisement.addressType }
        return Dictionary(found.map { ("\($0.address)", Int($0.rssi)) }, uniquingKeysWith: { first, _ in first })
    }
}
