import JSON

/// State the admin API shows but does not own. Other modules plug in here without the admin
/// module importing them: the daemon wires a closure per provider when the module exists.
///
/// Every provider is optional; a missing one is reported as `"not implemented yet"` (status)
/// or `503 Service Unavailable` (resync), never as an error of the admin API itself.
public struct AdminProviders: Sendable {
    /// The MQTT publisher's state, as a small JSON-ready summary.
    public var publisherStatus: (@Sendable () async -> PublisherStatus)?
    /// The Bluetooth LE host's state: controller and per-sensor connection state.
    public var bluetoothStatus: (@Sendable () async -> BluetoothStatus)?
    /// Re-asserts every retained document on the broker; returns a human-readable summary.
    public var resync: (@Sendable () async throws -> String)?
    /// A fleet of gateways (when configured): who holds which sensor and why, as JSON.
    public var fleetStatus: (@Sendable () async -> JSONValue)?

    public init(publisherStatus: (@Sendable () async -> PublisherStatus)? = nil,
                bluetoothStatus: (@Sendable () async -> BluetoothStatus)? = nil,
                resync: (@Sendable () async throws -> String)? = nil) {
        self.publisherStatus = publisherStatus
        self.bluetoothStatus = bluetoothStatus
        self.resync = resync
    }
}

/// What the publisher reports: `state` is free text such as `connected`, `connecting`,
/// `disconnected`; `detail` carries the last error or the broker address.
public struct PublisherStatus: Sendable, Equatable {
    public var state: String
    public var detail: String?
    public var publishedTotal: Int64?
    /// The broker connected to or being tried (`host:port`), one of `mqtt.hosts`.
    public var broker: String?
    /// Moves to another broker of `mqtt.hosts` since start (failover or back).
    public var failovers: Int

    public init(state: String, detail: String? = nil, publishedTotal: Int64? = nil, broker: String? = nil, failovers: Int = 0) {
        self.state = state
        self.detail = detail
        self.publishedTotal = publishedTotal
        self.broker = broker
        self.failovers = failovers
    }
}

/// What the BLE host reports: the controller's state and each sensor's connection state by
/// address, as text for people (`sensors`) and as counters for programs (`live`).
public struct BluetoothStatus: Sendable, Equatable {
    public var controller: String
    public var sensors: [String: String]
    public var live: [String: SensorLive]

    public init(controller: String, sensors: [String: String] = [:], live: [String: SensorLive] = [:]) {
        self.controller = controller
        self.sensors = sensors
        self.live = live
    }
}

/// One sensor's link state and counters since the gateway started, so that a program reads
/// numbers instead of parsing the `connection` text.
public struct SensorLive: Sendable, Equatable {
    /// The supervisor's state (`streaming`, `backingOff`, …).
    public var state: String
    public var samplesReceived: Int64
    /// Samples the board produced for the gyro stream, received or not.
    public var samplesExpected: Int64
    public var gaps: Int
    public var missingSamples: Int64
    public var reconnects: Int
    public var failedAttempts: Int
    public var batteryPercent: Int?
    /// Whether samples are stamped by the board's clock; nil before the stream starts.
    public var boardTime: Bool?
    /// Backfill only (nil otherwise): entries left in the board's log, and samples stored into
    /// gaps from it.
    public var logEntries: Int64?
    public var backfilledSamples: Int64?
    public var lastError: String?
    /// In a fleet: who should hold the sensor and why.
    public var fleet: String?

    public init(state: String, samplesReceived: Int64 = 0, samplesExpected: Int64 = 0, gaps: Int = 0, missingSamples: Int64 = 0,
                reconnects: Int = 0, failedAttempts: Int = 0, batteryPercent: Int? = nil, boardTime: Bool? = nil,
                logEntries: Int64? = nil, backfilledSamples: Int64? = nil, lastError: String? = nil) {
        self.state = state
        self.samplesReceived = samplesReceived
        self.samplesExpected = samplesExpected
        self.gaps = gaps
        self.missingSamples = missingSamples
        self.reconnects = reconnects
        self.failedAttempts = failedAttempts
        self.batteryPercent = batteryPercent
        self.boardTime = boardTime
        self.logEntries = logEntries
        self.backfilledSamples = backfilledSamples
        self.lastError = lastError
    }
}
