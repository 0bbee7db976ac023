import BluetoothWire
import HCI

/// One LE link, central role.
public actor LEConnection {
    public nonisolated let handle: UInt16
    public nonisolated let peer: BluetoothAddress
    public nonisolated let gatt: GATTClient

    init(handle: UInt16, peer: BluetoothAddress, gatt: GATTClient) {
        self.handle = handle
        self.peer = peer
        self.gatt = gatt
    }

    /// Asks the controller to end the link (reason 0x13) and waits for Disconnection Complete.
    public func disconnect() async {}

    /// Waits until the link is down and returns the reason.
    public func waitForDisconnection() async -> HCIStatus { .connectionTerminatedByLocalHost }

    /// Host-initiated LE Connection Update; returns when the controller reports completion.
    public func requestConnectionParameters(minIntervalMs: Double, maxIntervalMs: Double, latency: UInt16,
                                            supervisionTimeoutMs: Double) async throws {}

    public var isConnected: Bool { false }
}
