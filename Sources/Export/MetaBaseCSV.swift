import GyroStore

/// MetaBase's CSV (MbientLab's app): `epoch (ms),time (-08:00),elapsed (s),x-axis (deg/s),…`,
/// then gyrogate's columns, which MetaBase has no word for (docs/export.md):
/// `session,clock,backfilled,gap (samples),gap reason`.
///
/// Numbers as MetaBase writes them, with one exception: `epoch (ms)` keeps the stamps'
/// microseconds (3 decimals; MetaBase writes whole milliseconds) so that it equals the
/// published documents' `timestamp`. `elapsed (s)` has 3 decimals, the axes 3 (gyro) or 5
/// (accelerometer, whose counts 3 would lose).
struct MetaBaseCSV: RowFormat {
    let context: ExportContext
    private var time: LocalTime
    /// `,session,clock,`, the same on every row.
    private let fixedColumns: [UInt8]

    init(_ context: ExportContext) {
        self.context = context
        time = LocalTime(offsetSeconds: context.offsetSeconds)
        var fixed: [UInt8] = [UInt8(ascii: ",")]
        fixed.append(csvField: context.sessionId)
        fixed.append(UInt8(ascii: ","))
        fixed.append(csvField: context.clock)
        fixed.append(UInt8(ascii: ","))
        fixedColumns = fixed
    }

    static func header(offsetSeconds: Int, unit: String) -> String {
        "epoch (ms),time (\(LocalTime.offsetText(offsetSeconds))),elapsed (s),x-axis (\(unit)),y-axis (\(unit)),z-axis (\(unit))"
    }

    func header(into out: inout [UInt8]) {
        out.append(text: Self.header(offsetSeconds: context.offsetSeconds, unit: context.stream.unit))
        out.append(",session,clock,backfilled,gap (samples),gap reason\n")
    }

    mutating func row(_ sample: ExportSample, into out: inout [UInt8]) {
        let point = sample.point
        out.append(fixed: point.time, scale: 3, places: 3)
        out.append(UInt8(ascii: ","))
        time.append(micros: point.time, to: &out)
        out.append(UInt8(ascii: ","))
        out.append(fixed: point.time - context.firstMicros, scale: 6, places: 3)
        let places = context.stream.csvDecimals
        func axis(_ value: Int64) {
            out.append(UInt8(ascii: ","))
            if value != ChunkBody.Point.missingValue { out.append(fixed: value, scale: 5, places: places) }
        }
        axis(point.x); axis(point.y); axis(point.z)
        out.append(contentsOf: fixedColumns)
        out.append(point.backfilled ? "true" : "false")
        out.append(UInt8(ascii: ","))
        if sample.missingBefore > 0 { out.append(integer: sample.missingBefore) }
        out.append(UInt8(ascii: ","))
        if !sample.gapReasons.isEmpty { out.append(csvField: sample.gapReasons) }
        out.append(UInt8(ascii: "\n"))
    }
}

extension Array where Element == UInt8 {
    /// A CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, a quote or a line break.
    mutating func append(csvField text: String) {
        let needsQuotes = text.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
        guard needsQuotes else { return append(contentsOf: text.utf8) }
        append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            if byte == UInt8(ascii: "\"") { append(UInt8(ascii: "\"")) }
            append(byte)
        }
        append(UInt8(ascii: "\""))
    }
}
