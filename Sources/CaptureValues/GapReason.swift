/// Why samples of a stream are missing: what a stream tracker, a sensor supervisor, the capture
/// engine and the store record with a gap, and what the admin API and the session documents show.
///
/// The MetaWear layer finds most gaps (its `StreamTracker`), the sensors' supervisor, the capture
/// engine and the store the others, so the type lives in this module below all of them rather
/// than in any one: the store and the capture engine need nothing of the MetaWear protocol for
/// it. Its ``rawValue`` is the stored and published form: the `gaps` of
/// session rows in SQLite, the `records` documents on MQTT, and the reliability suite's checks all
/// read these words, so they stay as they are. Text read back that names no known reason (a row
/// written by another version) becomes ``other(_:)`` and is written back unchanged.
public enum GapReason: Sendable, Hashable, RawRepresentable, Codable, CustomStringConvertible {
    /// The stream's counter or timing skipped: the board produced samples that never arrived.
    case notReceived
    /// The board stayed connected but sent nothing for the watchdog's time.
    case silent
    /// The link went down; the text is the link's own reason (`"peer terminated (0x13)"`, …).
    case disconnected(String)
    /// The board reset (a new `reset_uid`), which ended its streams.
    case boardReset
    /// The streams were restarted on the same link without a cause known to the supervisor.
    case reinitialised
    /// A session an earlier run of the gateway left open goes on after the restart.
    case gatewayRestarted
    /// The board's initialisation failed and had to be made again.
    case initialisationFailed
    /// The board moved between gateways of a fleet: the samples it produced after the last one
    /// the previous gateway received and before this one's first (`SessionHandoff`).
    case handedOver
    /// Captured and stored, then evicted unpublished by retention because the store reached its
    /// size limit or the disk filled; or, while the disk was full and commits failed, never stored.
    case storeFull
    /// Any other text, kept as it was read.
    case other(String)

    public init(rawValue: String) {
        switch rawValue {
        case "notReceived": self = .notReceived
        case "silent": self = .silent
        case "board reset": self = .boardReset
        case "reinitialised": self = .reinitialised
        case "gateway restarted": self = .gatewayRestarted
        case "initialisation failed": self = .initialisationFailed
        case "handed over": self = .handedOver
        case "storeFull": self = .storeFull
        default:
            if rawValue.hasPrefix(Self.disconnectedPrefix), rawValue.hasSuffix(")"), rawValue.count > Self.disconnectedPrefix.count {
                self = .disconnected(String(rawValue.dropFirst(Self.disconnectedPrefix.count).dropLast()))
            } else {
                self = .other(rawValue)
            }
        }
    }

    public var rawValue: String {
        switch self {
        case .notReceived: "notReceived"
        case .silent: "silent"
        case .disconnected(let linkReason): Self.disconnectedPrefix + linkReason + ")"
        case .boardReset: "board reset"
        case .reinitialised: "reinitialised"
        case .gatewayRestarted: "gateway restarted"
        case .initialisationFailed: "initialisation failed"
        case .handedOver: "handed over"
        case .storeFull: "storeFull"
        case .other(let text): text
        }
    }

    public var description: String { rawValue }

    /// A link loss, whatever the link said.
    public var isDisconnection: Bool {
        if case .disconnected = self { return true }
        return false
    }

    private static let disconnectedPrefix = "disconnected ("
}
