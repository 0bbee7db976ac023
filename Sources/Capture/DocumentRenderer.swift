import GyroStore

/// Renders the apps' Firestore documents as JSON.
///
/// - `records/{id}`: `user_id`, `timestamp` (epoch seconds the session ended; `null` while
///   open), `hazards`, `gscope_data` (gyroscope chunk ids in order), `accel_data`
///   (accelerometer chunk ids), `device`, `start`, `end` (epoch ms), `samples`, `expected`, `gaps`.
///   A gap is `{stream, from, to, from_index, to_index, missing, reason}`; `reason` is the
///   producer's (`notReceived`, `silent`, `disconnected (…)`, …) or `storeFull` for samples
///   retention evicted before they were published (`GapReason.storeFull`).
/// - `realtime_data/{uuid}`: `user_id`, `device`, `record`, `seq`, `sensor`, `odr_hz`,
///   `range_dps` (or `range_g`), `start`, `end`, `gaps`, `data`. Accelerometer points go to
///   sibling chunks with `sensor: "accelerometer"` and `ax`/`ay`/`az` in g, because the two
///   streams run at their own rates.
/// - `TitanUpUsers/{uid}/DailySessions/{sessionId}`: the chart summary.
/// - `TitanUpUsers/{uid}/MedalsAndTrophies/current`: one boolean per medal.
public struct DocumentRenderer: Sendable {
    public var location: (latitude: Double, longitude: Double)?

    public init(location: (latitude: Double, longitude: Double)? = nil) { self.location = location }

    public func record(_ session: SessionRecord) -> [UInt8] {
        var json = JSONWriter(capacity: 512 + session.chunkIds.count * 40)
        json.beginObject()
        json.key("user_id"); json.string(session.userId)
        json.key("timestamp")
        if let end = session.endMs, !session.isOpen { json.integer(Int64((end / 1000).rounded(.down))) } else { json.null() }
        json.key("hazards"); hazards(session.hazards, into: &json)
        json.key("gscope_data"); strings(session.chunkIds, into: &json)
        json.key("accel_data"); strings(session.accelChunkIds, into: &json)
        json.key("device"); json.string(session.device)
        json.key("start"); json.number(session.startMs, decimals: 3)
        json.key("end")
        if let end = session.endMs { json.number(end, decimals: 3) } else { json.null() }
        json.key("samples"); json.integer(session.samples)
        json.key("expected"); json.integer(session.expected)
        json.key("gaps"); gaps(session.gaps, into: &json)
        json.endObject()
        return json.bytes
    }

    /// The session's `records` and `DailySessions` documents, written whenever the session changes.
    public func sessionDocuments(_ session: SessionRecord) -> [DocumentWrite] {
        guard let record = try? DocumentPaths.record(session.id),
              let daily = try? DocumentPaths.dailySession(userId: session.userId, sessionId: session.id) else { return [] }
        return [DocumentWrite(path: record, body: self.record(session), retain: true, device: session.device),
                DocumentWrite(path: daily, body: dailySession(session), retain: true, device: session.device)]
    }

    public func dailySession(_ session: SessionRecord) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        json.key("date"); json.string(session.localDate)
        json.key("start"); json.number(session.startMs, decimals: 3)
        json.key("end")
        if let end = session.endMs { json.number(end, decimals: 3) } else { json.null() }
        json.key("duration"); json.number(session.durationMs / 1000, decimals: 3)
        json.key("samples"); json.integer(session.samples)
        json.key("chunks"); json.integer(session.chunkIds.count + session.accelChunkIds.count)
        json.key("gaps"); json.integer(session.gaps.count)
        json.key("missing"); json.integer(session.gaps.reduce(0) { $0 + $1.missing })
        json.key("hazards"); hazards(session.hazards, into: &json)
        json.key("record"); json.string(session.id)
        json.key("device"); json.string(session.device)
        json.key("open"); json.bool(session.isOpen)
        json.endObject()
        return json.bytes
    }

    /// `backfilled`: every point came from the board's log (a chunk a backfill made).
    public func chunk(_ chunk: ChunkRecord, session: SessionRecord, samples: ArraySlice<StoredSample>, backfilled: Bool = false) -> [UInt8] {
        let stream = SensorStream(rawValue: chunk.stream) ?? .gyro
        var json = JSONWriter(capacity: 400 + samples.count * PointWriter.maximumBytes(location: location != nil))
        json.beginObject()
        json.key("user_id"); json.string(session.userId)
        json.key("device"); json.string(session.device)
        json.key("record"); json.string(session.id)
        json.key("seq"); json.integer(chunk.seq)
        json.key("sensor"); json.string(chunk.stream)
        json.key("odr_hz"); json.number(chunk.odrHz, decimals: 3)
        json.key(stream.rangeKey); json.number(chunk.range, decimals: 3)
        json.key("start"); chunk.startMs.map { json.number($0, decimals: 3) } ?? json.null()
        json.key("end"); chunk.endMs.map { json.number($0, decimals: 3) } ?? json.null()
        json.key("gaps"); gaps(chunk.gaps, into: &json)
        json.key("data")
        json.beginArray()
        // Points are written from precomputed key fragments: this loop is most of the cost of a chunk.
        let points = PointWriter(stream: stream, location: location, backfilled: backfilled)
        for (index, sample) in samples.enumerated() {
            points.write(sample, into: &json, afterAnother: index > 0)
        }
        json.endArray()
        json.endObject()
        return json.bytes
    }

    /// `chunk`'s document again, from its previous body `old` with the points of `added` (time-ordered)
    /// merged in by time and marked `"backfilled":true`: the points already published keep their
    /// exact text. `nil` when `old` is not a chunk document this renderer wrote.
    public func chunk(_ chunk: ChunkRecord, session: SessionRecord, splicing old: [UInt8], adding added: [StoredSample]) -> [UInt8]? {
        let marker = Array("\"data\":[".utf8), timestampKey = Array("{\"timestamp\":".utf8)
        guard old.count >= marker.count + 2, old[old.count - 2] == UInt8(ascii: "]"), old[old.count - 1] == UInt8(ascii: "}"),
              let data = old.lastIndex(of: marker) else { return nil }
        var existing: [(timestamp: Double, point: ArraySlice<UInt8>)] = []
        var at = data + marker.count
        let end = old.count - 2
        while at < end {
            guard old[at] == UInt8(ascii: "{") else { at += 1; continue }
            guard let close = old[at..<end].firstIndex(of: UInt8(ascii: "}")),
                  old[at...].starts(with: timestampKey),
                  let comma = old[(at + timestampKey.count)..<close].firstIndex(of: UInt8(ascii: ",")),
                  let timestamp = Double(String(decoding: old[(at + timestampKey.count)..<comma], as: UTF8.self))
            else { return nil }
            existing.append((timestamp, old[at...close]))
            at = close + 1
        }
        var out = self.chunk(chunk, session: session, samples: [][...])
        out.removeLast(2)  // "]}": the points go in between
        let points = PointWriter(stream: SensorStream(rawValue: chunk.stream) ?? .gyro, location: location, backfilled: true)
        var (i, j) = (0, 0)
        while i < existing.count || j < added.count {
            if i + j > 0 { out.append(UInt8(ascii: ",")) }
            if j == added.count || (i < existing.count && existing[i].timestamp <= added[j].timestampMs) {
                out.append(contentsOf: existing[i].point)
                i += 1
            } else {
                var json = JSONWriter(capacity: 128)
                points.write(added[j], into: &json)
                out.append(contentsOf: json.bytes)
                j += 1
            }
        }
        out.append(contentsOf: Array("]}".utf8))
        return out
    }

    public func medals(_ medals: Medals) -> [UInt8] {
        var json = JSONWriter()
        json.beginObject()
        for name in Medals.names { json.key(name); json.bool(medals[name]) }
        json.endObject()
        return json.bytes
    }

    private func hazards(_ hazards: [String: Int], into json: inout JSONWriter) {
        json.beginObject()
        for name in hazards.keys.sorted() { json.key(name); json.integer(hazards[name]!) }
        json.endObject()
    }

    private func strings(_ values: [String], into json: inout JSONWriter) {
        json.beginArray()
        for value in values { json.string(value) }
        json.endArray()
    }

    private func gaps(_ gaps: [GapRange], into json: inout JSONWriter) {
        json.beginArray()
        for gap in gaps {
            json.beginObject()
            json.key("stream"); json.string(gap.stream)
            json.key("from"); json.number(gap.fromMs, decimals: 3)
            json.key("to"); json.number(gap.toMs, decimals: 3)
            json.key("from_index"); json.integer(gap.fromIndex)
            json.key("to_index"); json.integer(gap.toIndex)
            json.key("missing"); json.integer(gap.missing)
            json.key("reason"); json.string(gap.reason.rawValue)
            json.endObject()
        }
        json.endArray()
    }
}

/// One point of a chunk's `data`, from key fragments made once per chunk.
struct PointWriter {
    let comma = Array(",".utf8)
    private let keyX: [UInt8], keyY: [UInt8], keyZ: [UInt8]
    private let timestampKey = Array("{\"timestamp\":".utf8), latitudeKey = Array(",\"lat\":".utf8), longitudeKey = Array(",\"lon\":".utf8)
    private let close: [UInt8]
    private let location: (latitude: Double, longitude: Double)?

    init(stream: SensorStream, location: (latitude: Double, longitude: Double)?, backfilled: Bool = false) {
        let (kx, ky, kz) = stream.axisKeys
        keyX = Array("\"\(kx)\":".utf8)
        keyY = Array(",\"\(ky)\":".utf8)
        keyZ = Array(",\"\(kz)\":".utf8)
        close = Array((backfilled ? ",\"backfilled\":true}" : "}").utf8)
        self.location = location
    }

    /// The longest point this writes (outside backfill): a comma, 13 + 17 bytes of timestamp
    /// (epoch ms, 3 decimals), three axes of at most 11 bytes ("-1999.99994") behind keys of 5-6,
    /// the brace; a location adds 37.
    ///
    /// Why an upper bound: a chunk's buffer is reserved from it. An estimate below the real
    /// length (72, for values of a few dps) made every full-range chunk outgrow its buffer
    /// at the end: a copy of what was rendered into a much larger block (docs/benchmarks.md).
    static func maximumBytes(location: Bool) -> Int { location ? 120 : 83 }

    @inline(__always)
    func write(_ sample: StoredSample, into json: inout JSONWriter, afterAnother: Bool = false) {
        json.appendComposed { point in
            if afterAnother { point.raw(comma) }
            point.raw(timestampKey); point.number(sample.timestampMs, decimals: 3)
            point.raw(comma); point.raw(keyX); point.number(Double(sample.x), decimals: 5)
            point.raw(keyY); point.number(Double(sample.y), decimals: 5)
            point.raw(keyZ); point.number(Double(sample.z), decimals: 5)
            if let location {
                point.raw(latitudeKey); point.number(location.latitude, decimals: 7)
                point.raw(longitudeKey); point.number(location.longitude, decimals: 7)
            }
            point.raw(close)
        }
    }
}

extension Array where Element == UInt8 {
    /// Start of the last occurrence of `needle`.
    func lastIndex(of needle: [UInt8]) -> Int? {
        guard count >= needle.count else { return nil }
        var at = count - needle.count
        while at >= 0 {
            if self[at..<(at + needle.count)].elementsEqual(needle) { return at }
            at -= 1
        }
        return nil
    }
}
