/// One sensor as the live view shows it, from the daemon (the web module does not import the
/// sensors' module).
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
