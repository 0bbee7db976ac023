import Capture

/// The live view's events and `/api/sensors`, written straight into bytes: no value tree, no
/// intermediate strings, keys in a fixed order. A broadcast runs every two seconds on otherwise
/// cold code and caches, so what it builds and frees is much of what it costs.
enum LiveEncoding {
    /// The `points` event of the tap's points numbered `after + 1 ... through`:
    /// `{"ADDRESS":[[ms,x,y,z,gap],...],...}`, devices in address order, values to two decimals
    /// (a plot needs no more), its id the newest point's sequence number; nothing when there is
    /// no such point. Returns the tap's newest sequence number. Written while the tap is read,
    /// so no point is copied out first.
    @discardableResult
    static func pointsEvent(_ tap: LiveTap, after: Int64, through: Int64 = .max, into out: inout [UInt8]) -> Int64 {
        let start = out.count
        out.append(contentsOf: "event: points\ndata: {".utf8)
        var newest: Int64?
        let last = tap.read(after: after, through: through) { device, entries in
            if newest != nil { out.append(UInt8(ascii: ",")) }
            string(device, into: &out)
            out.append(contentsOf: ":[".utf8)
            for (index, entry) in entries.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "["))
                integer(Int64(entry.timestampMs.rounded()), into: &out)
                out.append(UInt8(ascii: ","))
                hundredths(entry.x, into: &out)
                out.append(UInt8(ascii: ","))
                hundredths(entry.y, into: &out)
                out.append(UInt8(ascii: ","))
                hundredths(entry.z, into: &out)
                out.append(contentsOf: entry.gap ? ",1]".utf8 : ",0]".utf8)
                newest = max(newest ?? entry.sequence, entry.sequence)
            }
            out.append(UInt8(ascii: "]"))
        }
        guard let newest else {
            out.removeSubrange(start...)
            return last
        }
        // An event's fields may come in any order; its id is known once its points are written.
        out.append(contentsOf: "}\nid: ".utf8)
        integer(newest, into: &out)
        out.append(contentsOf: "\n\n".utf8)
        return last
    }

    /// The `sensors` event around ``sensors(_:names:nowMs:into:)``.
    static func sensorsEvent(_ sensors: [LiveSensor], names: [String: String], nowMs: Double, into out: inout [UInt8]) {
        out.append(contentsOf: "event: sensors\ndata: ".utf8)
        Self.sensors(sensors, names: names, nowMs: nowMs, into: &out)
        out.append(contentsOf: "\n\n".utf8)
    }

    /// `{"nowMs":...,"sensors":[{...},...]}`: each sensor as the page shows it, its configured
    /// name from `names` (keyed by upper-case address).
    static func sensors(_ sensors: [LiveSensor], names: [String: String], nowMs: Double, into out: inout [UInt8]) {
        out.append(contentsOf: "{\"nowMs\":".utf8)
        number(nowMs.rounded(), into: &out)
        out.append(contentsOf: ",\"sensors\":[".utf8)
        for (index, sensor) in sensors.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: "{\"address\":".utf8)
            string(sensor.address, into: &out)
            out.append(contentsOf: ",\"backfill\":".utf8)
            out.append(contentsOf: sensor.backfill ? "true".utf8 : "false".utf8)
            out.append(contentsOf: ",\"backfilledSamples\":".utf8)
            integer(sensor.backfilledSamples, into: &out)
            out.append(contentsOf: ",\"batteryPercent\":".utf8)
            if let battery = sensor.batteryPercent { integer(Int64(battery), into: &out) } else { out.append(contentsOf: "null".utf8) }
            out.append(contentsOf: ",\"fleet\":".utf8)
            optionalString(sensor.fleet, into: &out)
            out.append(contentsOf: ",\"gaps\":".utf8)
            integer(Int64(sensor.gaps), into: &out)
            out.append(contentsOf: ",\"lastError\":".utf8)
            optionalString(sensor.lastError, into: &out)
            out.append(contentsOf: ",\"lastSampleMs\":".utf8)
            if let last = sensor.lastSampleMs { number(last, into: &out) } else { out.append(contentsOf: "null".utf8) }
            out.append(contentsOf: ",\"missingSamples\":".utf8)
            integer(sensor.missingSamples, into: &out)
            out.append(contentsOf: ",\"name\":".utf8)
            optionalString(names[sensor.address.uppercased()], into: &out)
            out.append(contentsOf: ",\"odrHz\":".utf8)
            number(sensor.odrHz, into: &out)
            out.append(contentsOf: ",\"samplesExpected\":".utf8)
            integer(sensor.samplesExpected, into: &out)
            out.append(contentsOf: ",\"samplesReceived\":".utf8)
            integer(sensor.samplesReceived, into: &out)
            out.append(contentsOf: ",\"state\":".utf8)
            string(sensor.state, into: &out)
            out.append(contentsOf: ",\"userId\":".utf8)
            string(sensor.userId, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: "]}".utf8)
    }

    static func integer(_ value: Int64, into out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        let start = out.count
        repeat {
            out.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        out[start...].reverse()
    }

    static func hundredths(_ value: Float, into out: inout [UInt8]) {
        guard value.isFinite else { return out.append(UInt8(ascii: "0")) }
        let scaled = Int64((Double(value) * 100).rounded())
        if scaled < 0 { out.append(UInt8(ascii: "-")) }
        let magnitude = Int64(scaled.magnitude)
        integer(magnitude / 100, into: &out)
        out.append(UInt8(ascii: "."))
        out.append(UInt8(ascii: "0") + UInt8(magnitude % 100 / 10))
        out.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
    }

    /// A JSON number: whole numbers without a fraction, `null` for what JSON cannot hold.
    static func number(_ value: Double, into out: inout [UInt8]) {
        guard value.isFinite else { return out.append(contentsOf: "null".utf8) }
        if value == value.rounded(), value.magnitude < 9e15 { return integer(Int64(value), into: &out) }
        out.append(contentsOf: value.description.utf8)
    }

    static func optionalString(_ text: String?, into out: inout [UInt8]) {
        if let text { string(text, into: &out) } else { out.append(contentsOf: "null".utf8) }
    }

    /// A JSON string: quotes, backslashes and control characters escaped.
    static func string(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: "\\u00".utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// The `hundredths` text of `value`, for tests.
    static func rounded(_ value: Float) -> String {
        var out: [UInt8] = []
        hundredths(value, into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
