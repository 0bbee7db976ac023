import BluetoothWire
import HCI
import PosixThreads

/// One LE link in the central role: its handle, peer, GATT client and connection parameters.
///
/// Created by ``BLEHost/connect(to:addressType:timeout:)``. When the link goes down (either
/// side, or the transport), ``gatt`` fails its running request, every notification stream
/// finishes and ``waitForDisconnection()`` returns the controller's reason. A handle is never
/// reused by this object: reconnecting gives a new ``LEConnection``.
public actor LEConnection {
    public nonisolated let handle: UInt16
    public nonisolated let peer: BluetoothAddress
    public nonisolated let peerAddressType: BluetoothAddressType
    public nonisolated let gatt: GATTClient
    /// The thread on which the link's packets, and so its notifications, are handled.
    public nonisolated let loop: ThreadExecutor
    nonisolated let link: LinkState
    private weak var host: BLEHost?

    init(handle: UInt16, peer: BluetoothAddress, peerAddressType: BluetoothAddressType, gatt: GATTClient,
         link: LinkState, host: BLEHost) {
        self.handle = handle
        loop = host.transport.loop
        self.peer = peer
        self.peerAddressType = peerAddressType
        self.gatt = gatt
        self.link = link
        self.host = host
    }

    /// Asks the controller to end the link (Remote User Terminated, 0x13) and waits until it is
    /// down. Returns at once when it already is; never throws (a dead transport also ends links).
    public func disconnect() async {
        guard link.isConnected, let host else { return }
        await host.disconnect(handle: handle, link: link)
        _ = await link.waitUntilDown()
    }

    /// Waits until the link is down and returns the reason (e.g. 0x08 supervision timeout,
    /// 0x13 remote user terminated, 0x16 terminated by this host).
    public func waitForDisconnection() async -> HCIStatus {
        await link.waitUntilDown().status
    }

    /// Waits until the link is down and says why, telling a lost controller apart.
    public func waitForLinkEnd() async -> LinkEnd {
        await link.waitUntilDown()
    }

    /// Host-initiated LE Connection Update (Core v5.4, Vol 4, Part E, 7.8.18); returns when the
    /// controller reports LE Connection Update Complete.
    ///
    /// - throws: ``BLEHostError/invalidParameter(_:)`` for values outside the spec's ranges,
    ///   ``BLEHostError/commandFailed(opcode:status:)`` when the controller or the peer refuses.
    public func requestConnectionParameters(minIntervalMs: Double, maxIntervalMs: Double, latency: UInt16,
                                            supervisionTimeoutMs: Double) async throws {
        guard let host else { throw BLEHostError.notReady(state: "stopped") }
        let range = try ConnectionParameters.range(minIntervalMs: minIntervalMs, maxIntervalMs: maxIntervalMs,
                                                   latency: latency, supervisionTimeoutMs: supervisionTimeoutMs)
        try await host.updateConnection(handle: handle, link: link, parameters: range)
    }

    public var isConnected: Bool { link.isConnected }
}
