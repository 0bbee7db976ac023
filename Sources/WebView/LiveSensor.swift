/// Where the live view reads the sensors' state: the daemon adapts the sensors' module to it
/// (the web module imports neither the sensors nor the BLE host).
public protocol LiveSensorSource: Sendable {
    /// Every sensor's state now (`/api/sensors`).
    func sensors() async -> [LiveSensor]

    /// Calls `tick` with every sensor's state, first after `first` seconds, then every `every`
    /// seconds or up to `tolerance` later, until the returned ticks are stopped; one call at a
    /// time. The source decides where `tick` runs: where the state lives, so that reading it
    /// needs no task or thread of its own (the daemon: a timer of the sensors' loop, fired at a
    /// wake-up that loop makes anyway for the sensors' data).
    func ticks(first: Double, every: Double, tolerance: Double, _ tick: @escaping @Sendable ([LiveSensor]) -> Void) -> any LiveSensorTicks
}

/// A running ``LiveSensorSource/ticks(first:every:tolerance:_:)``.
public protocol LiveSensorTicks: Sendable {
    /// No tick starts after this returns (one already running finishes).
    func stop()
}

/// One sensor as the live view shows it, from the daemon.
public struct LiveSensor: Sendable, Equatable {
    public var address: String
    public var userId: String
    public var state: String
    public var batteryPercent: Int?
    public var odrHz: Double
    public var samplesReceived: Int64
    public var samplesExpected: Int64
    public var gaps: Int
    public var missingSamples: Int64
    public var backfill: Bool
    public var backfilledSamples: Int64
    public var lastSampleMs: Double?
    public var lastError: String?
    /// In a fleet of gateways: who should hold the sensor and why.
    public var fleet: String?

    public init(address: String, userId: String, state: String, batteryPercent: Int? = nil, odrHz: Double,
                samplesReceived: Int64 = 0, samplesExpected: Int64 = 0, gaps: Int = 0, missingSamples: Int64 = 0,
                backfill: Bool = false, backfilledSamples: Int64 = 0, lastSampleMs: Double? = nil, lastError: String? = nil) {
        self.address = address
        self.userId = userId
        self.state = state
        self.batteryPercent = batteryPercent
        self.odrHz = odrHz
        self.samplesReceived = samplesReceived
        self.samplesExpected = samplesExpected
        self.gaps = gaps
        self.missingSamples = missingSamples
        self.backfill = backfill
        self.backfilledSamples = backfilledSamples
        self.lastSampleMs = lastSampleMs
        self.lastError = lastError
    }
}
