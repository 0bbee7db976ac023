import FoundationEssentials
import ZoneInfo

/// The whole configuration of one gateway, as read from `config.json`.
/// Every field has a documented default except the ones a gateway cannot guess.
public struct GatewayConfiguration: Sendable, Equatable {
    /// Names this gateway in MQTT presence and user properties.
    public var gatewayId: String
    /// Absolute path of the folder holding the SQLite store (relative paths in the file are
    /// taken from the configuration file's folder).
    public var dataDirectory: String
    /// IANA zone in which "today", "this week" and "this month" are calendar periods.
    public var timeZone: Zone
    /// First day of the week, 1 = Sunday … 7 = Saturday; ISO Monday by default.
    public var firstWeekday: Int
    public var bluetooth: BluetoothSettings
    public var sensors: [SensorSettings]
    /// When set, any MetaWear found by a scan is captured for this user, up to a maximum.
    public var discovery: DiscoverySettings?
    public var gyro: GyroSettings
    public var accelerometer: AccelerometerSettings
    public var capture: CaptureSettings
    public var sessions: SessionSettings
    public var mqtt: MQTTSettings
    public var admin: AdminSettings
    /// A fixed position added to every point as `lat`/`lon`; `nil` adds none.
    public var location: Location?
    public var retention: RetentionSettings
    /// What the gateway does with each board besides streaming: button, LED, battery reads.
    public var boards: BoardSettings = BoardSettings()
    /// Home Assistant MQTT discovery: off unless the optional `homeAssistant` section enables it.
    public var homeAssistant: HomeAssistantSettings = HomeAssistantSettings()
    /// The live-view page: off (`nil`) unless the optional `web` section names `listen`.
    public var web: WebSettings?
    /// Several gateways sharing the sensors: off (`nil`) unless the optional `fleet` section is there.
    public var fleet: FleetSettings?
}

/// Home Assistant MQTT discovery (`homeAssistant`): when enabled, the gateway publishes
/// retained discovery documents under `discoveryPrefix` for itself and each configured sensor,
/// and a state document they read.
public struct HomeAssistantSettings: Sendable, Equatable {
    public static let defaultDiscoveryPrefix = "homeassistant"
    public var enabled: Bool
    /// Home Assistant's discovery prefix (its MQTT integration's setting, `homeassistant` by
    /// default). Topics are `<discoveryPrefix>/<component>/<node_id>/<object_id>/config`, not
    /// under `mqtt.topicPrefix`.
    public var discoveryPrefix: String

    public init(enabled: Bool = false, discoveryPrefix: String = HomeAssistantSettings.defaultDiscoveryPrefix) {
        self.enabled = enabled
        self.discoveryPrefix = discoveryPrefix
    }
}

public struct BoardSettings: Sendable, Equatable {
    /// A press of the board's button starts a session when none is open and stops it otherwise
    /// (use with `sessions.autoStart` false).
    public var buttonStartsSession: Bool = false
    /// A short green blink when streaming starts.
    public var ledOnStreaming: Bool = false
    /// Seconds between battery reads (also read at every connection).
    public var batteryIntervalSeconds: Int = 300

    public init(buttonStartsSession: Bool = false, ledOnStreaming: Bool = false, batteryIntervalSeconds: Int = 300) {
        self.buttonStartsSession = buttonStartsSession
        self.ledOnStreaming = ledOnStreaming
        self.batteryIntervalSeconds = batteryIntervalSeconds
    }
}

public struct BluetoothSettings: Sendable, Equatable {
    public var transport: TransportSpec
    /// Most sensors connected at once on this controller.
    public var maxSensors: Int
    /// While every stream carries the board's time, the controller is read at most this often
    /// (ms), so that a wake-up handles a batch of notifications; 0 reads each at once.
    public var readIntervalMs: Int

    public init(transport: TransportSpec, maxSensors: Int, readIntervalMs: Int? = nil) {
        self.transport = transport
        self.maxSensors = maxSensors
        self.readIntervalMs = readIntervalMs ?? Self.defaultReadIntervalMs(transport)
    }

    /// 500 ms on a socket (TCP has flow control; the user channel's receive buffer is raised to
    /// hold it, see `UserChannel`); 100 ms on a serial line, whose tty buffer holds 4 KB. Why
    /// batch at all: the data plane's cost is mostly its wake-ups, and reading less often saves
    /// CPU per sample up to about 500 ms, little beyond (e2e bench, docs/benchmarks.md), while a
    /// crash loses up to this interval more (docs/durability.md).
    public static func defaultReadIntervalMs(_ transport: TransportSpec) -> Int {
        if case .serial = transport { return 100 }
        return 500
    }
}

public struct SensorSettings: Sendable, Equatable {
    public var address: String
    public var userId: String
    public var name: String
    /// `backfill: true` (or `{"whenFull": "overwrite" | "stop"}`): the board logs its gyro stream
    /// and gaps of the link are filled from the log at the next connection.
    public var backfill: BackfillSettings?

    public init(address: String, userId: String, name: String, backfill: BackfillSettings? = nil) {
        self.address = address
        self.userId = userId
        self.name = name
        self.backfill = backfill
    }
}

public struct BackfillSettings: Sendable, Equatable {
    /// When the board's log is full: overwrite the oldest entries (default) or stop logging.
    public var overwrite: Bool

    public init(overwrite: Bool) { self.overwrite = overwrite }
}

public struct DiscoverySettings: Sendable, Equatable {
    public var userId: String
    public var maxSensors: Int
}

public struct GyroSettings: Sendable, Equatable {
    public static let rates: [Double] = [25, 50, 100, 200, 400, 800, 1600, 3200]
    public static let ranges: [Double] = [125, 250, 500, 1000, 2000]
    public var odrHz: Double
    public var rangeDps: Double
}

public struct AccelerometerSettings: Sendable, Equatable {
    public static let rates: [Double] = [12.5, 25, 50, 100, 200, 400, 800, 1600]
    public static let ranges: [Double] = [2, 4, 8, 16]
    public var enabled: Bool
    public var odrHz: Double
    public var rangeG: Double
}

public struct CaptureSettings: Sendable, Equatable {
    /// Points per `realtime_data` document (the apps used 2,000, about 40 s at 50 Hz).
    public var chunkSize: Int
    /// Longest time between two store commits; what a crash can lose at most.
    public var commitIntervalMs: Int
    /// The commit interval when every configured sensor has `backfill` on (1,000–60,000 ms): its
    /// board's log then holds what a crash loses, and fewer commits write less to the card.
    public var backfillCommitIntervalMs: Int? = nil

    /// The interval capture commits at, and why: `backfillCommitIntervalMs` when it is set and
    /// every sensor of `sensors` has backfill on, `commitIntervalMs` otherwise.
    public func commitInterval(sensors: [SensorSettings]) -> (ms: Int, reason: String) {
        guard let longer = backfillCommitIntervalMs else { return (commitIntervalMs, "capture.commitIntervalMs") }
        if let without = sensors.first(where: { $0.backfill == nil }) {
            return (commitIntervalMs, "capture.commitIntervalMs (capture.backfillCommitIntervalMs is not used: sensor \(without.address) has no backfill)")
        }
        if sensors.isEmpty { return (commitIntervalMs, "capture.commitIntervalMs (capture.backfillCommitIntervalMs is not used: no sensor is configured)") }
        return (longer, "capture.backfillCommitIntervalMs (every sensor has backfill on: its board's log holds what a crash loses)")
    }
}

public struct SessionSettings: Sendable, Equatable {
    /// Start a session when a sensor starts streaming.
    public var autoStart: Bool
    /// Close a sensor's session after it has been gone this long.
    public var idleTimeoutSeconds: Int
    /// Split sessions longer than this.
    public var maxDurationMinutes: Int
}

public struct AdminSettings: Sendable, Equatable {
    public var socketPath: String
    /// File mode of the socket, 0660 by default.
    public var mode: Int
    public var group: String?
    /// Peer uids allowed to call mutating endpoints (POST, DELETE). With `allowedGroups` also
    /// empty, anyone who can open the socket may (the socket's mode and group decide).
    public var allowedUids: [UInt32] = []
    /// Group names whose members (primary group of the peer, or listed members) may call
    /// mutating endpoints.
    public var allowedGroups: [String] = []
}

public struct Location: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
}

public struct RetentionSettings: Sendable, Equatable {
    /// Bytes the store may use before published chunk data is pruned, oldest first.
    public var maxStoreBytes: Int
}
