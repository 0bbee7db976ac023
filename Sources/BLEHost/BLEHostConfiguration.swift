import BluetoothWire

/// How a ``BLEHost`` drives its controller. Every field has a working default.
public struct BLEHostConfiguration: Sendable {
    /// Deadline for each HCI command; a controller that never answers fails the command, not the host.
    public var commandTimeout: Duration = .seconds(2)
    /// Deadline for HCI Reset, which real controllers may take longer to answer.
    public var resetTimeout: Duration = .seconds(5)
    /// ATT request timeout; 30 s is the spec's (Core v5.4, Vol 3, Part F, 3.3.3).
    public var attRequestTimeout: Duration = .seconds(30)
    /// The own address used when scanning and connecting.
    public var ownAddressType: BluetoothAddressType = .random
    /// The static random address set at start when ``ownAddressType`` is random; one is made up when nil.
    public var randomAddress: BluetoothAddress?
    /// Scan interval and window, ms (2.5 ms ... 10.24 s).
    public var scanIntervalMs: Double = 60
    public var scanWindowMs: Double = 30
    /// Active scanning asks for scan responses (where names often are).
    public var activeScan: Bool = true
    /// Connection parameters asked for when connecting.
    public var connectionIntervalMinMs: Double = 7.5
    public var connectionIntervalMaxMs: Double = 15
    public var peripheralLatency: UInt16 = 0
    public var supervisionTimeoutMs: Double = 4000
    /// Whether peer requests for new connection parameters (L2CAP or LL) are accepted when valid.
    public var acceptsPeerConnectionParameterRequests: Bool = true
    /// The most connections at once; more connects fail at once.
    public var maximumConnections: Int = 8
    /// The largest L2CAP frame accepted from a peer (bounds reassembly memory).
    public var maximumL2CAPFrameLength: Int = 1024

    public init() {}
}
