import GyroStore
import XCTest
@testable import Capture

/// The store keeps closed chunks compact (``ChunkBody``); what it publishes is, byte for byte, the
/// JSON document a generic writer makes of the same chunk.
final class ChunkBodyTests: XCTestCase {
    private let session = SessionRecord(id: "s1", userId: "u\"1", device: "C4:BE:84:00:00:01", startMs: 0, localDate: "2026-11-26")

    /// The chunk document written member by member with ``JSONWriter``'s generic calls: the
    /// reference the compact form must reproduce.
    private func reference(_ chunk: ChunkRecord, samples: [StoredSample], backfilled: [Bool],
                           location: (latitude: Double, longitude: Double)?) -> [UInt8] {
        let stream = SensorStream(rawValue: chunk.stream) ?? .gyro
        var json = JSONWriter()
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
        json.key("gaps")
        json.beginArray()
        for gap in chunk.gaps {
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
        json.key("data")
        json.beginArray()
        for (index, sample) in samples.enumerated() {
            json.beginObject()
            json.key("timestamp"); json.number(sample.timestampMs, decimals: 3)
            for (key, value) in zip(stream.axisKeys, [sample.x, sample.y, sample.z]) { json.key(key); json.number(Double(value), decimals: 5) }
            if let location {
                json.key("lat"); json.number(location.latitude, decimals: 7)
                json.key("lon"); json.number(location.longitude, decimals: 7)
            }
            if backfilled[index] { json.key("backfilled"); json.bool(true) }
            json.endObject()
        }
        json.endArray()
        json.endObject()
        return json.bytes
    }

    /// Samples as sensors make them (int16 × scale, stamps on a jittered or exact period) and
    /// values no sensor makes (tiny, negative near zero, irregular times, full range).
    private func samples(_ count: Int, seed: UInt64, stream: SensorStream) -> [StoredSample] {
        var state = seed
        func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 33
        }
        // As the sensors layer scales a board's counts (SampleDecoder), counts walking a little per sample.
        let unitsPerLSB = stream == .gyro ? 1 / 16.4 : 1 / 2048.0
        var counts: [Int64] = [0, 0, 0]
        var time = 1_764_000_000_000.0 + Double(next() % 1_000_000) / 7
        return (0..<count).map { index in
            switch seed % 3 {
            case 0: time += 10
            case 1: time += 9.8 + Double(next() % 400) / 1000
            default: time += index % 97 == 0 ? 123.456789 : 2.5
            }
            func axis(_ n: Int) -> Float {
                guard seed % 2 == 0 else { return Float(Int64(next() % 2_000_001) - 1_000_000) / 1e6 * 0.0001 }
                counts[n] = max(-32768, min(32767, counts[n] + Int64(next() % 81) - 40))
                return Float(Double(counts[n]) * unitsPerLSB)
            }
            return StoredSample(timestampMs: time, x: axis(0), y: axis(1), z: index == 5 && seed % 2 == 1 ? -0.000004 : axis(2))
        }
    }

    private func chunk(_ stream: SensorStream, samples: [StoredSample]) -> ChunkRecord {
        var chunk = ChunkRecord(id: "c1", sessionId: "s1", stream: stream.rawValue, seq: 3, odrHz: 100, range: stream == .gyro ? 2000 : 16,
                                firstIndex: 600)
        chunk.count = samples.count
        chunk.startMs = samples.first?.timestampMs
        chunk.endMs = samples.last?.timestampMs
        chunk.gaps = [GapRange(stream: stream.rawValue, fromIndex: 700, toIndex: 709, fromMs: 1.5, toMs: 99.25, missing: 10, reason: .notReceived)]
        chunk.isOpen = false
        return chunk
    }

    func testTheRenderedBodyIsTheJSONDocumentByteForByte() throws {
        for seed in UInt64(0)..<12 {
            for stream in SensorStream.allCases {
                for location in [nil, (latitude: -33.8688197, longitude: 151.2092955)] as [(latitude: Double, longitude: Double)?] {
                    let samples = self.samples(seed == 0 ? 0 : 2_000, seed: seed, stream: stream)
                    let chunk = self.chunk(stream, samples: samples)
                    let backfilled = seed % 4 == 3
                    let stored = DocumentRenderer(location: location).chunk(chunk, session: session, samples: samples[...], backfilled: backfilled)
                    XCTAssertTrue(ChunkBody.isCompact(stored))
                    let rendered = try XCTUnwrap(ChunkBody.json(stored))
                    let expected = reference(chunk, samples: samples, backfilled: Array(repeating: backfilled, count: samples.count), location: location)
                    XCTAssertEqual(String(decoding: rendered, as: UTF8.self), String(decoding: expected, as: UTF8.self), "seed \(seed) \(stream)")
                    if seed % 3 == 0, !samples.isEmpty, location == nil {
                        // Regular stamps and a board's counts: a few bytes a point, where the JSON takes about 60.
                        XCTAssertLessThan(Double(stored.count - 400) / Double(samples.count), 8, "seed \(seed) \(stream)")
                    }
                }
            }
        }
    }

    func testASplicedCompactBodyMergesByTimeAndMarksOnlyTheNewPoints() throws {
        let all = samples(300, seed: 1, stream: .gyro)
        let kept = all.enumerated().filter { $0.offset % 3 != 1 }.map(\.element)
        let added = all.enumerated().filter { $0.offset % 3 == 1 }.map(\.element)
        let renderer = DocumentRenderer(location: (latitude: 1, longitude: 2))
        let old = renderer.chunk(chunk(.gyro, samples: kept), session: session, samples: kept[...])
        let whole = chunk(.gyro, samples: all)
        let spliced = try XCTUnwrap(renderer.chunk(whole, session: session, splicing: old, adding: added))
        XCTAssertTrue(ChunkBody.isCompact(spliced))
        let expected = reference(whole, samples: all, backfilled: all.indices.map { $0 % 3 == 1 }, location: (1, 2))
        XCTAssertEqual(String(decoding: try XCTUnwrap(ChunkBody.json(spliced)), as: UTF8.self), String(decoding: expected, as: UTF8.self))
    }

    func testDamagedBodiesAreRefusedWithoutTrapping() throws {
        let samples = self.samples(200, seed: 2, stream: .accelerometer)
        var stored = DocumentRenderer().chunk(chunk(.accelerometer, samples: samples), session: session, samples: samples[...])
        for length in 0..<stored.count {
            XCTAssertNil(ChunkBody.decode(Array(stored[..<length])), "cut at \(length)")
        }
        var state: UInt64 = 7
        for _ in 0..<2_000 {
            state = state &* 6364136223846793005 &+ 1
            var damaged = stored
            damaged[1 + Int(state >> 33) % (stored.count - 1)] ^= UInt8(truncatingIfNeeded: state >> 20) | 1
            _ = ChunkBody.json(damaged)
        }
        stored.append(0)
        XCTAssertNil(ChunkBody.json(stored), "trailing bytes")
        XCTAssertNil(ChunkBody.decode([0, 1] + [UInt8](repeating: 0xFF, count: 12)), "an overlong varint")
    }

    /// What the store returns and publishes for a compact body is its JSON; a JSON body (an
    /// older gateway's) is returned as it is.
    func testTheStoreReadsAndPublishesTheJSON() async throws {
        let store = try GyroStore.inMemory()
        let samples = self.samples(2_000, seed: 4, stream: .gyro)
        let record = chunk(.gyro, samples: samples)
        let stored = DocumentRenderer().chunk(record, session: session, samples: samples[...])
        let legacy = Array(#"{"user_id":"u","data":[]}"#.utf8)
        var changes = StoreChanges()
        changes.documents = [DocumentWrite(path: try DocumentPaths.chunk("c1"), body: stored, retain: true, device: session.device),
                             DocumentWrite(path: try DocumentPaths.chunk("c2"), body: legacy, retain: true, device: session.device)]
        try await store.commit(changes)
        let expected = reference(record, samples: samples, backfilled: Array(repeating: false, count: samples.count), location: nil)
        let read = try await store.document(try DocumentPaths.chunk("c1"))
        XCTAssertEqual(read, expected)
        let legacyRead = try await store.document(try DocumentPaths.chunk("c2"))
        XCTAssertEqual(legacyRead, legacy)
        let outbox = try await store.pendingOutbox(after: 0, limit: 10)
        XCTAssertEqual(outbox.map(\.payload), [expected, legacy])
        let retained = try await store.retainedDocuments()
        XCTAssertEqual(retained.map(\.payload), [expected, legacy])
    }
}
