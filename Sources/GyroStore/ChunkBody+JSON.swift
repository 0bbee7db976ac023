extension ChunkBody {
    /// The JSON document of a stored body: compact bodies rendered, JSON ones as they are; `nil`
    /// when a compact body is damaged.
    public static func json(_ body: [UInt8]) -> [UInt8]? {
        guard isCompact(body) else { return body }
        guard let parts = decode(body) else { return nil }
        var out: [UInt8] = []
        render(parts, into: &out)
        return out
    }

    /// Renders `parts` into `out` (emptied first, its capacity kept: the publisher reuses one buffer).
    public static func render(_ parts: Parts, into out: inout [UInt8]) {
        let points = PointText(axisKeys: parts.axisKeys, suffix: parts.pointSuffix)
        out.removeAll(keepingCapacity: true)
        out.reserveCapacity(parts.head.count + parts.points.count * points.reservedBytes + 2)
        out.append(contentsOf: parts.head)
        points.append(parts.points[...], to: &out)
        out.append(UInt8(ascii: "]"))
        out.append(UInt8(ascii: "}"))
    }

    /// `old` (a stored chunk body) under a new `head`, with the points of `added` (time-ordered)
    /// merged in by time and marked `"backfilled":true`; the points already there are unchanged.
    /// A JSON body stays JSON (its points keep their text; the new ones get `axisKeys` and
    /// `pointSuffix`); a compact one stays compact (its own keys and suffix). `nil` when `old` is
    /// neither a chunk document nor a compact body.
    public static func splice(_ old: [UInt8], head: [UInt8], axisKeys: [String], pointSuffix: [UInt8],
                              adding added: [StoredSample]) -> [UInt8]? {
        let new = added.map { Point($0, backfilled: true) }
        if isCompact(old) {
            guard var parts = decode(old) else { return nil }
            var merged: [Point] = []
            merged.reserveCapacity(parts.points.count + new.count)
            var (i, j) = (0, 0)
            while i < parts.points.count || j < new.count {
                if j == new.count || (i < parts.points.count && parts.points[i].time <= new[j].time) {
                    merged.append(parts.points[i]); i += 1
                } else {
                    merged.append(new[j]); j += 1
                }
            }
            parts.head = head
            parts.points = merged
            return encode(parts)
        }
        return spliceJSON(old, head: head, points: PointText(axisKeys: axisKeys, suffix: pointSuffix), adding: new)
    }

    /// The points of a JSON chunk document, each its time and text, merged with `added`.
    private static func spliceJSON(_ old: [UInt8], head: [UInt8], points: PointText, adding added: [Point]) -> [UInt8]? {
        let marker = Array("\"data\":[".utf8), timestampKey = Array("{\"timestamp\":".utf8)
        guard old.count >= marker.count + 2, old[old.count - 2] == UInt8(ascii: "]"), old[old.count - 1] == UInt8(ascii: "}"),
              let data = lastIndex(of: marker, in: old) else { return nil }
        var existing: [(time: Int64, text: ArraySlice<UInt8>)] = []
        var at = data + marker.count
        let end = old.count - 2
        while at < end {
            guard old[at] == UInt8(ascii: "{") else { at += 1; continue }
            guard let close = old[at..<end].firstIndex(of: UInt8(ascii: "}")),
                  old[at...].starts(with: timestampKey),
                  let comma = old[(at + timestampKey.count)..<close].firstIndex(of: UInt8(ascii: ",")),
                  let timestamp = Double(String(decoding: old[(at + timestampKey.count)..<comma], as: UTF8.self))
            else { return nil }
            existing.append((scaled(timestamp, places: timePlaces), old[at...close]))
            at = close + 1
        }
        var out = head
        var (i, j) = (0, 0)
        while i < existing.count || j < added.count {
            if i + j > 0 { out.append(UInt8(ascii: ",")) }
            if j == added.count || (i < existing.count && existing[i].time <= added[j].time) {
                out.append(contentsOf: existing[i].text)
                i += 1
            } else {
                points.append(added[j...j], to: &out)
                j += 1
            }
        }
        out.append(contentsOf: Array("]}".utf8))
        return out
    }

    private static func lastIndex(of needle: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= needle.count else { return nil }
        var at = bytes.count - needle.count
        while at >= 0 {
            if bytes[at..<(at + needle.count)].elementsEqual(needle) { return at }
            at -= 1
        }
        return nil
    }
}

/// A chunk's points as JSON text, from key fragments made once per chunk.
struct PointText {
    private let timestampKey = Array("{\"timestamp\":".utf8)
    private let keys: [[UInt8]]
    private let suffix: [UInt8]
    private let close = Array("}".utf8), backfilledClose = Array(",\"backfilled\":true}".utf8)
    /// The longest point: a comma, the keys, four numbers of at most 30 bytes, the suffix and close.
    let maximumBytes: Int
    /// The longest point a sensor's samples make (outside backfill): a comma, 13 + 17 bytes of
    /// timestamp (epoch ms, 3 decimals), three axes of at most 11 bytes ("-1999.99994") behind
    /// their keys, the suffix, the brace.
    ///
    /// Why an upper bound: a document's buffer is reserved from it. An estimate below the real
    /// length made every full-range chunk outgrow its buffer at the end: a copy of what was
    /// rendered into a much larger block (docs/benchmarks.md).
    let reservedBytes: Int

    init(axisKeys: [String], suffix: [UInt8]) {
        keys = (0..<3).map { Array(",\"\(($0 < axisKeys.count ? axisKeys[$0] : ""))\":".utf8) }
        self.suffix = suffix
        let fixed = 1 + timestampKey.count + keys.reduce(0) { $0 + $1.count } + suffix.count
        maximumBytes = fixed + 4 * 30 + backfilledClose.count
        reservedBytes = fixed + 17 + 3 * 11 + close.count
    }

    /// Appends `points`, comma-separated (not before the first), each composed in one buffer and appended at once: a
    /// point is a dozen fragments and numbers, and appending each to the array checked its
    /// uniqueness and capacity every time.
    func append(_ points: ArraySlice<ChunkBody.Point>, to out: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maximumBytes) { buffer in
            let start = buffer.baseAddress!
            var first = true
            for point in points {
                var count = 0
                func raw(_ fragment: [UInt8]) {
                    fragment.withUnsafeBufferPointer { (start + count).update(from: $0.baseAddress!, count: $0.count) }
                    count += fragment.count
                }
                func number(_ value: Int64, places: Int) {
                    if value == ChunkBody.missing {
                        raw(Array("null".utf8))
                    } else {
                        count += JSONWriter.writeScaled(value, places: places, to: start + count)
                    }
                }
                if !first { start[count] = UInt8(ascii: ","); count += 1 }
                first = false
                raw(timestampKey); number(point.time, places: ChunkBody.timePlaces)
                raw(keys[0]); number(point.x, places: ChunkBody.axisPlaces)
                raw(keys[1]); number(point.y, places: ChunkBody.axisPlaces)
                raw(keys[2]); number(point.z, places: ChunkBody.axisPlaces)
                if !suffix.isEmpty { raw(suffix) }
                raw(point.backfilled ? backfilledClose : close)
                out.append(contentsOf: UnsafeBufferPointer(start: start, count: count))
            }
        }
    }
}
