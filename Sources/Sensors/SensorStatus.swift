/// Where a sensor's supervisor is. Every change is logged (subsystem=sensor) and counted.
public enum SensorState: String, Sendable, Equatable, CaseIterable {
    /// Known (configured, or seen by a scan), not yet connecting.
    case discovered
    case connecting
    /// Connected: discovery, reset, configuration.
    case initialising
    case streaming
    /// Connected but no data for longer than the watchdog allows; recovery follows.
    case silent
    /// Waiting before the next connection attempt.
    case backingOff
    /// Left alone: another gateway of the fleet holds the sensor or should take it
    /// (``SensorStatus/fleet`` says which and why).
    case heldElsewhere
    /// The supervisor is not running: the gateway is stopping, or the controller went away and
    /// is being opened again.
    case stopped
}

/// A snapshot of one sensor for the admin socket and logs.
public struct SensorStatus: Sendable, Equatable {
    public var address: String
    public var userId: String
    public var state: SensorState
    public var model: String?
    public var firmware: String?
    public var batteryPercent: Int?
    public var batteryMillivolts: Int?
    public var odrHz: Double
    /// Samples the board produced for the gyro stream, received or not (the stream index).
    public var samplesExpected: Int64 = 0
    public var samplesReceived: Int64 = 0
    /// Whether the gyro's samples are stamped by the board's clock (its time accounter) rather
    /// than by their arrival; nil before the stream starts.
    public var boardTime: Bool?
    /// Whether the board logs its stream for backfill.
    public var backfill = false
    /// Entries in the board's log at the last download, not yet removed (backfill only).
    public var logEntries: Int64 = 0
    /// Samples stored into gaps from the board's log.
    public var backfilledSamples: Int64 = 0
    public var gaps: Int = 0
    public var missingSamples: Int64 = 0
    /// Epoch milliseconds of the newest sample.
    public var lastSampleMs: Double?
    /// Successful connections after the first.
    public var reconnects: Int = 0
    /// Connection attempts that failed.
    public var failedAttempts: Int = 0
    /// Times each state was entered.
    public var transitions: [SensorState: Int] = [:]
    public var lastError: String?
    /// In a fleet of gateways: who should hold the sensor and why, as of the last connection
    /// decision (`nil` without a fleet).
    public var fleet: String?

    public init(address: String, userId: String, state: SensorState, odrHz: Double) {
        self.address = address
        self.userId = userId
        self.state = state
        self.odrHz = odrHz
    }
}

/// Capped exponential back-off with jitter: attempt k waits a random time in
/// [½·d, d], d = min(cap, base·2^k). Never gives up.
public struct Backoff: Sendable, Equatable {
    public var base: Duration
    public var cap: Duration

    public init(base: Duration = .milliseconds(250), cap: Duration = .seconds(30)) {
        self.base = base
        self.cap = cap
    }

    public func delay(attempt: Int, unit: Double = Double.random(in: 0...1)) -> Duration {
        let capSeconds = cap.seconds
        let full = min(capSeconds, base.seconds * Double(1 << min(attempt, 30)))
        return .seconds(full * (0.5 + 0.5 * unit))
    }
}

extension Duration {
    var seconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) * 1e-18
    }
}
