/// How the store keeps a closed chunk's document: its JSON head as text, its points as numbers,
/// a few bytes a point where the JSON takes tens (docs/durability.md). The JSON is rendered from
/// it whenever the document is read (published, resynced, shown), byte for byte what the whole
/// text would have been (`ChunkBodyTests`).
///
/// Why: a chunk's JSON was most of what the store wrote, and written twice (the WAL, then the
/// checkpoint's copy into the file); docs/durability.md, "Writes".
///
/// Exact by construction: a point's JSON has its time with 3 decimals and its axes with 5
/// (``JSONWriter``), so each is kept as that value scaled and rounded, the integer the text is
/// written from. Times advance by a nearly constant step and axes change little from a sample to
/// the next, so each is stored as its difference from what the previous points predict (zigzag
/// LEB128 varints): 1 or 2 bytes for a time. Axes are the board's counts times its units per
/// count; when the writer names that factor (`Parts.unitsPerLSB`) and every axis value is
/// exactly `Float(Double(count) × factor)`, the counts are stored (1 or 2 bytes an axis), else
/// the scaled values (up to 5).
///
/// Layout: `0x00` (no JSON text starts with it), the format version, then varint-prefixed byte
/// strings: the head (the document's text up to and including `"data":[`), the three axis
/// names, the point suffix (the location members, or nothing); the number of points; a flag
/// byte (0: no point backfilled, 1: all, 2: a bitmap of the backfilled ones follows); the axes'
/// form (0: scaled values; 1: counts, then the factor as 8 little-endian bytes); the points.
/// Bodies whose first byte is `{` are JSON documents as older gateways stored them, and are
/// read as they are.
public enum ChunkBody {
    static let marker: UInt8 = 0
    static let formatVersion: UInt8 = 1
    static let timePlaces = 3, axisPlaces = 5
    /// A value the JSON would write as `null` (not finite) or in quotes (beyond fixed point):
    /// no sensor produces one; it is rendered as `null`.
    static let missing = Int64.min

    /// One point as it is stored: time in thousandths of a millisecond, axes in 1e-5 units.
    public struct Point: Sendable, Equatable {
        public var time: Int64
        public var x: Int64, y: Int64, z: Int64
        public var backfilled: Bool

        public init(_ sample: StoredSample, backfilled: Bool) {
            time = ChunkBody.scaled(sample.timestampMs, places: ChunkBody.timePlaces)
            x = ChunkBody.scaled(Double(sample.x), places: ChunkBody.axisPlaces)
            y = ChunkBody.scaled(Double(sample.y), places: ChunkBody.axisPlaces)
            z = ChunkBody.scaled(Double(sample.z), places: ChunkBody.axisPlaces)
            self.backfilled = backfilled
        }

        /// The sample as its JSON reads back (what a subscriber sees).
        public var sample: StoredSample {
            StoredSample(timestampMs: Double(time) / 1_000, x: Float(Double(x) / 100_000), y: Float(Double(y) / 100_000),
                         z: Float(Double(z) / 100_000))
        }
    }

    /// A stored body, taken apart.
    public struct Parts: Sendable, Equatable {
        /// The document's JSON up to and including `"data":[`.
        public var head: [UInt8]
        public var axisKeys: [String]
        /// Written after a point's last axis, before its close (the location members).
        public var pointSuffix: [UInt8]
        public var points: [Point]
        /// Units per count of the sensor's range, when the axes are counts scaled by it: they
        /// are then stored as counts, checked to give back the same values.
        public var unitsPerLSB: Double?

        public init(head: [UInt8], axisKeys: [String], pointSuffix: [UInt8], points: [Point], unitsPerLSB: Double? = nil) {
            self.head = head
            self.axisKeys = axisKeys
            self.pointSuffix = pointSuffix
            self.points = points
            self.unitsPerLSB = unitsPerLSB
        }
    }

    /// `value` × 10^`places`, rounded, as ``JSONWriter`` computes it before writing.
    static func scaled(_ value: Double, places: Int) -> Int64 {
        var scale = 1.0
        for _ in 0..<places { scale *= 10 }
        guard value.isFinite, abs(value) < 9e15 / scale else { return missing }
        return Int64((value * scale).rounded())
    }

    /// The point suffix for a location: its members as ``JSONWriter`` writes them (7 decimals).
    public static func locationSuffix(_ location: (latitude: Double, longitude: Double)?) -> [UInt8] {
        guard let location else { return [] }
        var json = JSONWriter(capacity: 48)
        json.beginObject()
        json.key("lat"); json.number(location.latitude, decimals: 7)
        json.key("lon"); json.number(location.longitude, decimals: 7)
        json.endObject()
        // `{"lat":…,"lon":…}` → `,"lat":…,"lon":…`
        return [UInt8(ascii: ",")] + json.bytes.dropFirst().dropLast()
    }

    /// Whether `body` is in this form (else it is a JSON document).
    public static func isCompact(_ body: some Collection<UInt8>) -> Bool { body.first == marker }

    public static func encode(_ parts: Parts) -> [UInt8] {
        var times: [Int64] = [], axes: [Int64] = []
        times.reserveCapacity(parts.points.count)
        for point in parts.points { times.append(point.time) }
        var counts: [Int64]?
        if let unitsPerLSB = parts.unitsPerLSB { counts = Self.counts(of: parts.points, unitsPerLSB: unitsPerLSB) }
        if let counts {
            axes = counts
        } else {
            axes.reserveCapacity(parts.points.count * 3)
            for point in parts.points { axes.append(point.x); axes.append(point.y); axes.append(point.z) }
        }
        return assemble(head: parts.head, axisKeys: parts.axisKeys, pointSuffix: parts.pointSuffix, backfilled: parts.points.map(\.backfilled),
                        unitsPerLSB: counts == nil ? nil : parts.unitsPerLSB, times: times, axes: axes)
    }

    /// A new chunk's body from its samples, every point `backfilled` or none: the encoder's
    /// common path, which checks the counts on the samples' own values.
    public static func encode(head: [UInt8], axisKeys: [String], pointSuffix: [UInt8], samples: ArraySlice<StoredSample>,
                              backfilled: Bool, unitsPerLSB: Double?) -> [UInt8] {
        if let unitsPerLSB, unitsPerLSB.isFinite, unitsPerLSB > 0 {
            var times: [Int64] = [], axes: [Int64] = []
            times.reserveCapacity(samples.count)
            axes.reserveCapacity(samples.count * 3)
            var exact = true
            for sample in samples {
                guard let x = count(sample.x, unitsPerLSB), let y = count(sample.y, unitsPerLSB), let z = count(sample.z, unitsPerLSB) else {
                    exact = false
                    break
                }
                times.append(scaled(sample.timestampMs, places: timePlaces))
                axes.append(x); axes.append(y); axes.append(z)
            }
            if exact {
                return assemble(head: head, axisKeys: axisKeys, pointSuffix: pointSuffix, backfilled: [backfilled], unitsPerLSB: unitsPerLSB,
                                times: times, axes: axes)
            }
        }
        return encode(Parts(head: head, axisKeys: axisKeys, pointSuffix: pointSuffix,
                            points: samples.map { Point($0, backfilled: backfilled) }))
    }

    /// The count whose scaled value is exactly `value`, if there is one.
    @inline(__always)
    static func count(_ value: Float, _ unitsPerLSB: Double) -> Int64? {
        let count = (Double(value) / unitsPerLSB).rounded()
        guard abs(count) <= 1_048_576, Float(count * unitsPerLSB) == value else { return nil }
        return Int64(count)
    }

    /// The body: `backfilled` has a flag per point, or one for all of them; `axes` three values a
    /// point, counts when `unitsPerLSB` is given.
    static func assemble(head: [UInt8], axisKeys: [String], pointSuffix: [UInt8], backfilled: [Bool], unitsPerLSB: Double?,
                         times: [Int64], axes: [Int64]) -> [UInt8] {
        var out: [UInt8] = [marker, formatVersion]
        out.reserveCapacity(head.count + pointSuffix.count + 64 + times.count / 8 + times.count * 40)
        func bytes(_ value: some Collection<UInt8>) {
            appendVarint(UInt64(value.count), to: &out)
            out.append(contentsOf: value)
        }
        bytes(head)
        for index in 0..<3 { bytes(Array((index < axisKeys.count ? axisKeys[index] : "").utf8)) }
        bytes(pointSuffix)
        appendVarint(UInt64(times.count), to: &out)
        let marked = backfilled.count == 1 ? (backfilled[0] ? times.count : 0) : backfilled.reduce(0) { $0 + ($1 ? 1 : 0) }
        if marked == 0 || marked == times.count {
            out.append(marked == 0 ? 0 : 1)
        } else {
            out.append(2)
            var bitmap = [UInt8](repeating: 0, count: (times.count + 7) / 8)
            for (index, flag) in backfilled.enumerated() where flag { bitmap[index / 8] |= 1 << (index % 8) }
            out.append(contentsOf: bitmap)
        }
        if let unitsPerLSB {
            out.append(1)
            withUnsafeBytes(of: unitsPerLSB.bitPattern.littleEndian) { out.append(contentsOf: $0) }
        } else {
            out.append(0)
        }
        // Points are written through a pointer into room made for the longest (four 10-byte
        // varints): appending byte by byte checked the array's uniqueness and capacity each time.
        var at = out.count
        out.append(contentsOf: repeatElement(0, count: times.count * 40))
        out.withUnsafeMutableBufferPointer { buffer in
            let base = buffer.baseAddress!
            @inline(__always) func varint(_ value: Int64) {
                var rest = zigzag(value)
                while rest >= 0x80 {
                    base[at] = UInt8(truncatingIfNeeded: rest) | 0x80
                    at += 1
                    rest >>= 7
                }
                base[at] = UInt8(rest)
                at += 1
            }
            var time: Int64 = 0, step: Int64 = 0, x: Int64 = 0, y: Int64 = 0, z: Int64 = 0
            for index in 0..<times.count {
                let nextStep = times[index] &- time
                let (px, py, pz) = (axes[3 * index], axes[3 * index + 1], axes[3 * index + 2])
                varint(nextStep &- step)
                varint(px &- x)
                varint(py &- y)
                varint(pz &- z)
                (time, step, x, y, z) = (times[index], nextStep, px, py, pz)
            }
        }
        out.removeLast(out.count - at)
        return out
    }

    /// The counts whose scaled values are the points' axes, three a point; `nil` when a value is not one.
    static func counts(of points: [Point], unitsPerLSB: Double) -> [Int64]? {
        guard unitsPerLSB.isFinite, unitsPerLSB > 0 else { return nil }
        var counts: [Int64] = []
        counts.reserveCapacity(points.count * 3)
        func count(_ value: Int64) -> Int64? {
            let count = (Double(value) / 100_000 / unitsPerLSB).rounded()
            guard abs(count) <= 1_048_576, axis(count: Int64(count), unitsPerLSB: unitsPerLSB) == value else { return nil }
            return Int64(count)
        }
        for point in points {
            guard let x = count(point.x), let y = count(point.y), let z = count(point.z) else { return nil }
            counts.append(x); counts.append(y); counts.append(z)
        }
        return counts
    }

    /// An axis value from its count, as the sensors layer computes it (in Double, rounded once to Float).
    @inline(__always)
    static func axis(count: Int64, unitsPerLSB: Double) -> Int64 {
        scaled(Double(Float(Double(count) * unitsPerLSB)), places: axisPlaces)
    }

    /// `nil` when `body` is not a well-formed body of this form; never traps on any bytes.
    public static func decode(_ body: UnsafeRawBufferPointer) -> Parts? {
        var reader = Reader(bytes: body)
        guard reader.byte() == marker, reader.byte() == formatVersion, let head = reader.lengthPrefixed() else { return nil }
        var keys: [String] = []
        for _ in 0..<3 {
            guard let key = reader.lengthPrefixed() else { return nil }
            keys.append(String(decoding: key, as: UTF8.self))
        }
        guard let suffix = reader.lengthPrefixed(), let count = reader.varint(), count <= UInt64(body.count), let flag = reader.byte() else { return nil }
        let points = Int(count)
        var bitmap: [UInt8] = []
        switch flag {
        case 0, 1: break
        case 2:
            guard let bits = reader.take((points + 7) / 8) else { return nil }
            bitmap = Array(bits)
        default: return nil
        }
        var unitsPerLSB: Double?
        switch reader.byte() {
        case 0: break
        case 1:
            guard let factor = reader.take(8) else { return nil }
            let value = Double(bitPattern: UInt64(littleEndian: UnsafeRawBufferPointer(rebasing: factor).loadUnaligned(as: UInt64.self)))
            guard value.isFinite, value > 0 else { return nil }
            unitsPerLSB = value
        default: return nil
        }
        var parts = Parts(head: Array(head), axisKeys: keys, pointSuffix: Array(suffix), points: [], unitsPerLSB: unitsPerLSB)
        parts.points.reserveCapacity(points)
        var time: Int64 = 0, step: Int64 = 0, x: Int64 = 0, y: Int64 = 0, z: Int64 = 0
        for index in 0..<points {
            guard let dt = reader.varint(), let dx = reader.varint(), let dy = reader.varint(), let dz = reader.varint() else { return nil }
            step = step &+ unzigzag(dt)
            time = time &+ step
            x = x &+ unzigzag(dx); y = y &+ unzigzag(dy); z = z &+ unzigzag(dz)
            let backfilled = flag == 1 || (flag == 2 && bitmap[index / 8] & (1 << (index % 8)) != 0)
            if let unitsPerLSB {
                guard x.magnitude <= 1 << 20, y.magnitude <= 1 << 20, z.magnitude <= 1 << 20 else { return nil }
                parts.points.append(Point(time: time, x: axis(count: x, unitsPerLSB: unitsPerLSB), y: axis(count: y, unitsPerLSB: unitsPerLSB),
                                          z: axis(count: z, unitsPerLSB: unitsPerLSB), backfilled: backfilled))
            } else {
                parts.points.append(Point(time: time, x: x, y: y, z: z, backfilled: backfilled))
            }
        }
        guard reader.atEnd else { return nil }
        return parts
    }

    public static func decode(_ body: [UInt8]) -> Parts? {
        body.withUnsafeBytes { decode($0) }
    }

    static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }
    static func unzigzag(_ value: UInt64) -> Int64 { Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1) }

    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        out.append(UInt8(rest))
    }

    /// Bounds-checked reads from a stored body.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var at = 0

        var atEnd: Bool { at == bytes.count }

        mutating func byte() -> UInt8? {
            guard at < bytes.count else { return nil }
            defer { at += 1 }
            return bytes[at]
        }

        mutating func varint() -> UInt64? {
            var value: UInt64 = 0
            for shift in stride(from: 0, to: 70, by: 7) {
                guard let byte = byte() else { return nil }
                guard shift < 63 || byte <= 1 else { return nil }
                value |= UInt64(byte & 0x7F) << UInt64(shift)
                if byte & 0x80 == 0 { return value }
            }
            return nil
        }

        mutating func take(_ count: Int) -> UnsafeRawBufferPointer.SubSequence? {
            guard count >= 0, count <= bytes.count - at else { return nil }
            defer { at += count }
            return bytes[at..<(at + count)]
        }

        mutating func lengthPrefixed() -> UnsafeRawBufferPointer.SubSequence? {
            guard let count = varint(), count <= UInt64(bytes.count) else { return nil }
            return take(Int(count))
        }
    }
}

extension ChunkBody.Point {
    init(time: Int64, x: Int64, y: Int64, z: Int64, backfilled: Bool) {
        self.time = time
        self.x = x
        self.y = y
        self.z = z
        self.backfilled = backfilled
    }
}
