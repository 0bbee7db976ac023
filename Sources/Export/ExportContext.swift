import GyroStore

/// What every row of one session stream's export says besides its sample.
public struct ExportContext: Sendable {
    public var sessionId: String
    public var userId: String
    public var device: String
    public var stream: ExportStream
    /// The session's clock state (`records`' `clock`): `synchronised`, `board`,
    /// `unsynchronised`, or `unknown` for a session stored by a gateway that did not say.
    public var clock: String
    /// The zone's offset from UTC at the session's start, in seconds.
    public var offsetSeconds: Int
    /// The time of the stream's first sample (epoch microseconds): `elapsed (s)` counts from it.
    public var firstMicros: Int64

    public init(sessionId: String, userId: String, device: String, stream: ExportStream, clock: String, offsetSeconds: Int, firstMicros: Int64) {
        self.sessionId = sessionId
        self.userId = userId
        self.device = device
        self.stream = stream
        self.clock = clock
        self.offsetSeconds = offsetSeconds
        self.firstMicros = firstMicros
    }

    init(session: SessionRecord, stream: ExportStream, offsetSeconds: Int, firstMicros: Int64) {
        self.init(sessionId: session.id, userId: session.userId, device: session.device, stream: stream,
                  clock: session.dating?.rawValue ?? "unknown", offsetSeconds: offsetSeconds, firstMicros: firstMicros)
    }
}

/// One format's text: a header (CSV's; none for the others) and a line a sample.
protocol RowFormat {
    mutating func header(into out: inout [UInt8])
    mutating func row(_ sample: ExportSample, into out: inout [UInt8])
}

extension ExportFormat {
    func rows(_ context: ExportContext) -> any RowFormat {
        switch self {
        case .csv: MetaBaseCSV(context)
        case .influx: LineProtocol(context)
        case .jsonl: JSONLines(context)
        }
    }

    /// The file name's extension.
    var fileExtension: String {
        switch self {
        case .csv: "csv"
        case .influx: "lp"
        case .jsonl: "jsonl"
        }
    }
}
