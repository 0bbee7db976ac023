/// The three forms a session leaves the gateway in (docs/export.md).
public enum ExportFormat: String, Sendable, CaseIterable {
    /// MetaBase's CSV: one file per session, board and stream.
    case csv
    /// InfluxDB line protocol: one line a sample, nanosecond times.
    case influx
    /// JSON Lines: one object a sample.
    case jsonl

    public init(parsing text: String) throws(ExportError) {
        guard let format = ExportFormat(rawValue: text.lowercased()) else { throw .badFormat(text) }
        self = format
    }

    public var contentType: String {
        switch self {
        case .csv: "text/csv; charset=utf-8"
        case .influx: "text/plain; charset=utf-8"
        case .jsonl: "application/x-ndjson"
        }
    }
}

/// A session's streams, named as the store names them.
public enum ExportStream: String, Sendable, CaseIterable {
    case gyro
    case accelerometer

    public init(parsing text: String) throws(ExportError) {
        guard let stream = ExportStream(rawValue: text.lowercased()) else { throw .badStream(text) }
        self = stream
    }

    /// MetaBase's sensor word in file names.
    var sensorName: String { self == .gyro ? "Gyroscope" : "Accelerometer" }
    /// The unit in MetaBase's column headers.
    var unit: String { self == .gyro ? "deg/s" : "g" }
    /// The axis keys of the `realtime_data` points.
    var axisKeys: (String, String, String) { self == .gyro ? ("gx", "gy", "gz") : ("ax", "ay", "az") }
    /// Decimals of the CSV's values: MetaBase writes 3, which keeps every count of every gyro
    /// range (the finest, 125 deg/s, is 0.0038 deg/s a count) but not of the accelerometer's
    /// (1/16384 g a count at 2 g): its values keep the documents' 5.
    var csvDecimals: Int { self == .gyro ? 3 : 5 }
}
