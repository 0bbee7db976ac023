import GyroStore

/// Renders the apps' Firestore documents as JSON.
///
/// - `records/{id}`: `user_id`, `timestamp` (epoch seconds the session ended; `null` while
///   open), `hazards`, `gscope_data` (gyroscope chunk ids in order), `accel_data`
///   (accelerometer chunk ids), `device`, `start`, `end` (epoch ms), `samples`, `expected`, `gaps`,
///   `clock` (how the times are dated: `synchronised`, `board` or `unsynchronised`).
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
        // How the times above are dated (HostTime's `Dating`), null when a gateway did not say.
        json.key("clock")
        if let dating = session.dating { json.string(dating.rawValue) } else { json.null() }
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
        json.key("chunks"); json.integer(session.chunkCount)
        json.key("gaps"); json.integer(session.gaps.count)
        json.key("missing"); json.integer(session.gaps.reduce(0) { $0 + $1.missing })
        json.key("hazards"); hazards(session.hazards, into: &json)
        json.key("record"); json.string(session.id)
        json.key("device"); json.string(session.device)
        json.key("open"); json.bool(session.isOpen)
        json.endObject()
        return json.bytes
    }

    /// The chunk's document as the store keeps it (GyroStore's `ChunkBody`: rendered to its JSON when
    /// read). `backfilled`: every point came from the board's log (a chunk a backfill made).
    public func chunk(_ chunk: ChunkRecord, session: SessionRecord, samples: ArraySlice<StoredSample>, backfilled: Bool = false) -> [UInt8] {
        let stream = SensorStream(rawValue: chunk.stream) ?? .gyro
        return ChunkBody.encode(head: chunkHead(chunk, session: session), axisKeys: stream.axisKeys, pointSuffix: ChunkBody.locationSuffix(location),
                                samples: samples, backfilled: backfilled, unitsPerLSB: stream.unitsPerLSB(range: chunk.range))
    }

    /// `chunk`'s document again, from its previous stored body `old` with the points of `added`
    /// (time-ordered) merged in by time and marked `"backfilled":true`: the points already
    /// published keep their exact text. `nil` when `old` is not a chunk document.
    public func chunk(_ chunk: ChunkRecord, session: SessionRecord, splicing old: [UInt8], adding added: [StoredSample]) -> [UInt8]? {
        let stream = SensorStream(rawValue: chunk.stream) ?? .gyro
        return ChunkBody.splice(old, head: chunkHead(chunk, session: session), axisKeys: stream.axisKeys,
                                pointSuffix: ChunkBody.locationSuffix(location), adding: added)
    }

    /// A chunk document's JSON up to and including `"data":[`.
    func chunkHead(_ chunk: ChunkRecord, session: SessionRecord) -> [UInt8] {
        let stream = SensorStream(rawValue: chunk.stream) ?? .gyro
        var json = JSONWriter(capacity: 512)
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
        return json.bytes
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
