import GyroStore

/// JSON Lines, one object a sample, its keys those of the `realtime_data` points plus where it
/// belongs:
/// `{"session":"…","user":"…","device":"…","stream":"gyro","clock":"synchronised","timestamp":1718625600000.125,"gx":0.12195,"gy":-1.03659,"gz":0.4878,"backfilled":false}`,
/// and `"gap":{"missing":10,"reason":"notReceived"}` on the first sample after a gap.
struct JSONLines: RowFormat {
    /// `{"session":…,"clock":…,"timestamp":`, the same on every line.
    private let prefix: [UInt8]
    private let keys: (StaticString, StaticString, StaticString)

    init(_ context: ExportContext) {
        var prefix: [UInt8] = [UInt8(ascii: "{")]
        for (index, (name, value)) in [("session", context.sessionId), ("user", context.userId), ("device", context.device),
                                       ("stream", context.stream.rawValue), ("clock", context.clock)].enumerated() {
            if index > 0 { prefix.append(UInt8(ascii: ",")) }
            prefix.append(jsonString: name)
            prefix.append(UInt8(ascii: ":"))
            prefix.append(jsonString: value)
        }
        prefix.append(",\"timestamp\":")
        self.prefix = prefix
        keys = context.stream == .gyro ? (",\"gx\":", ",\"gy\":", ",\"gz\":") : (",\"ax\":", ",\"ay\":", ",\"az\":")
    }

    func header(into out: inout [UInt8]) {}

    func row(_ sample: ExportSample, into out: inout [UInt8]) {
        let point = sample.point
        out.append(contentsOf: prefix)
        out.append(trimmed: point.time, scale: 3)
        out.append(keys.0); out.append(axis: point.x, orNull: "null")
        out.append(keys.1); out.append(axis: point.y, orNull: "null")
        out.append(keys.2); out.append(axis: point.z, orNull: "null")
        out.append(point.backfilled ? ",\"backfilled\":true" : ",\"backfilled\":false")
        if sample.missingBefore > 0 {
            out.append(",\"gap\":{\"missing\":")
            out.append(integer: sample.missingBefore)
            out.append(",\"reason\":")
            out.append(jsonString: sample.gapReasons)
            out.append(UInt8(ascii: "}"))
        }
        out.append("}\n")
    }
}

extension Array where Element == UInt8 {
    /// A JSON string, escaped as RFC 8259 requires.
    mutating func append(jsonString text: String) {
        append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): append(UInt8(ascii: "\\")); append(byte)
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0..<0x20:
                append("\\u00")
                let hex = Array("0123456789abcdef".utf8)
                append(hex[Int(byte >> 4)]); append(hex[Int(byte & 0xF)])
            default: append(byte)
            }
        }
        append(UInt8(ascii: "\""))
    }
}
