import ATT
import BluetoothWire
import GAP
import HCI
import L2CAP
import Logging

/// The LE host: owns one controller through an ``HCITransport``.
public actor BLEHost {
    let transport: any HCITransport
    let configuration: BLEHostConfiguration
    let logger: Logger

    public init(transport: any HCITransport, configuration: BLEHostConfiguration = .init(), logger: Logger) {
        self.transport = transport
        self.configuration = configuration
        var logger = logger
        logger[metadataKey: "subsystem"] = "ble"
        self.logger = logger
    }

    /// Resets the controller, reads its buffer sizes, sets event masks and the random address.
    public func start() async throws {
        throw BLEHostError.notReady(state: "not implemented")
    }

    /// Scans for `duration` and returns one ``Advertisement`` per device, filtered by service
    /// UUID or address when given (a device passes when it matches either filter).
    public func scan(for duration: Duration, serviceUUID: BluetoothUUID? = nil,
                     addresses: Set<BluetoothAddress> = []) async throws -> [Advertisement] {
        throw BLEHostError.notReady(state: "not implemented")
    }

    /// Connects as central; cancels the attempt after `timeout` or on task cancellation.
    public func connect(to address: BluetoothAddress, addressType: BluetoothAddressType,
                        timeout: Duration = .seconds(10)) async throws -> LEConnection {
        throw BLEHostError.notReady(state: "not implemented")
    }

    public func status() -> BLEHostStatus {
        BLEHostStatus(state: .idle, controllerAddress: nil, randomAddress: nil, aclBufferSize: 0, aclBufferCount: 0,
                      aclBuffersAvailable: 0, connections: [], isScanning: false, isConnecting: false,
                      eventsReceived: 0, aclPacketsReceived: 0, aclPacketsSent: 0, malformedPackets: 0,
                      unknownPackets: 0, commandTimeouts: 0, reassemblyErrors: 0, creditAnomalies: 0,
                      connectionsOpened: 0, connectionsClosed: 0, parameterRequestsAccepted: 0,
                      parameterRequestsRejected: 0)
    }

    /// Disconnects every link, closes the transport and fails everything pending.
    public func stop() async {
        await transport.close()
    }
}
