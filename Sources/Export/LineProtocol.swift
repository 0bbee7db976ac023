import GyroStore

/// InfluxDB line protocol, one line a sample:
/// `gyro,device=C4:BE:84:00:00:01,user=demo-user,session=demo-user___1718625600,stream=gyro,clock=synchronised x=0.12195,y=-1.03659,z=0.4878 1718625600000125000`.
///
/// The measurement is the stream, the axes are fields `x y z` in its unit (5 decimals, as the
/// documents), `backfilled=true` is a field of backfilled samples only, and a sample after a
/// gap carries `gap_missing` (an integer) and `gap_reason`. Times are nanoseconds, exact: the
/// stamps' microseconds times 1000.
struct LineProtocol: RowFormat {
    /// The measurement and tags, the same on every line.
    private let key: [UInt8]

    init(_ context: ExportContext) {
        var key: [UInt8] = []
        key.append(measurement: context.stream.rawValue)
        for (name, value) in [("device", context.device), ("user", context.userId), ("session", context.sessionId),
                              ("stream", context.stream.rawValue), ("clock", context.clock)] where !value.isEmpty {
            key.append(UInt8(ascii: ","))
            key.append(tag: name)
            key.append(UInt8(ascii: "="))
            key.append(tag: value)
        }
        self.key = key
    }

    func header(into out: inout [UInt8]) {}

    func row(_ sample: ExportSample, into out: inout [UInt8]) {
        let point = sample.point
        var fields = 0
        func field(_ name: StaticString, _ value: Int64) {
            guard value != ChunkBody.Point.missingValue else { return }
            out.append(UInt8(ascii: fields == 0 ? " " : ","))
            out.append(name)
            out.append(trimmed: value, scale: 5)
            fields += 1
        }
        let start = out.count
        out.append(contentsOf: key)
        field("x=", point.x); field("y=", point.y); field("z=", point.z)
        // A line with no field is not valid line protocol: a sample with no finite axis is left out.
        guard fields > 0 else { return out.removeLast(out.count - start) }
        if point.backfilled { out.append(",backfilled=true") }
        if sample.missingBefore > 0 {
            out.append(",gap_missing=")
            out.append(integer: sample.missingBefore)
            out.append(",gap_reason=")
            out.append(fieldString: sample.gapReasons)
        }
        out.append(UInt8(ascii: " "))
        out.append(integer: point.time)
        out.append("000\n")
    }
}

extension Array where Element == UInt8 {
    /// A measurement name: commas and spaces escaped with a backslash.
    mutating func append(measurement text: String) {
        for byte in text.utf8 {
            if byte == UInt8(ascii: ",") || byte == UInt8(ascii: " ") { append(UInt8(ascii: "\\")) }
            append(byte == 0x0A || byte == 0x0D ? UInt8(ascii: " ") : byte)
        }
    }

    /// A tag key or value: commas, equals signs and spaces escaped with a backslash; a line
    /// break, which no escape allows, becomes an escaped space.
    mutating func append(tag text: String) {
        for byte in text.utf8 {
            let byte = byte == 0x0A || byte == 0x0D ? UInt8(ascii: " ") : byte
            if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "=") || byte == UInt8(ascii: " ") { append(UInt8(ascii: "\\")) }
            append(byte)
        }
    }

    /// A string field value: in double quotes, with quotes and backslashes escaped.
    mutating func append(fieldString text: String) {
        append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { append(UInt8(ascii: "\\")) }
            append(byte == 0x0A || byte == 0x0D ? UInt8(ascii: " ") : byte)
        }
        append(UInt8(ascii: "\""))
    }
}
