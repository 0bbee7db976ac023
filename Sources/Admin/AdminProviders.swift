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

    public init(state: String, detail: String? = nil, publishedTotal: Int64? = nil) {
        self.state = state
        self.detail = detail
        self.publishedTotal = publishedTotal
    }
}

/// What the BLE host reports: the controller's state and each sensor's connection state by address.
public struct BluetoothStatus: Sendable, Equatable {
    public var controller: String
    public var sensors: [String: String]

    public init(controller: String, sensors: [String: String] = [:]) {
        self.controller = controller
        self.sensors = sensors
    }
}
