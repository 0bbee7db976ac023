import Foundation
@testable import GyroStore
import JSON
import TestSupport
import XCTest

/// `gyrogate store dump` (``StoreDump``): what the store holds as JSON lines, read-only, from the
/// files a SIGKILL leaves (the last commits only in the WAL) or a copy of them.
final class StoreDumpTests: XCTestCase {
    let units = 2000.0 / 32768
    let device = "C4:BE:84:00:00:01"

    func samples(_ range: Range<Int>) -> [StoredSample] {
        range.map { i in
            StoredSample(timestampMs: 1_700_000_000_000 + Double(i) * 10, x: Float(Double(i % 500) * units),
                         y: Float(Double(-i % 77) * units), z: Float(Double(i % 3) * units))
        }
    }

    func dump(_ directory: String) throws -> [JSONValue] {
        var lines: [JSONValue] = []
        var failed: (any Error)?
        try StoreDump.write(directory: directory) { line in
            XCTAssertEqual(line.last, UInt8(ascii: "\n"))
            do { lines.append(try JSONValue(parsing: line.dropLast())) } catch { failed = error }
        }
        if let failed { throw failed }
        return lines
    }

    /// One session: a closed chunk with its document, an open one with samples in the ring, its
    /// record, their outbox rows. The files are copied while the store is open, as a kill leaves
    /// them; the dump reads every commit from the copy's WAL and leaves the file and WAL as they were.
    func testADumpOfAKilledStoresCopyReadsTheWALAndWritesNothing() async throws {
        let folder = try TemporaryDirectory(), copy = try TemporaryDirectory()
        defer { folder.remove(); copy.remove() }
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        var session = SessionRecord(id: "u___1700000000", userId: "u", device: device, startMs: 1_700_000_000_000, localDate: "2023-11-14")
        var closed = ChunkRecord(id: "\(session.id)_gyro_0", sessionId: session.id, stream: "gyro", seq: 0, odrHz: 100, range: 2000, firstIndex: 0)
        let open = ChunkRecord(id: "\(session.id)_gyro_1", sessionId: session.id, stream: "gyro", seq: 1, odrHz: 100, range: 2000, firstIndex: 103)
        var opening = StoreChanges()
        opening.sessions = [session]
        opening.chunks = [closed, open]
        opening.samples = [SampleAppend(chunkId: closed.id, offset: 0, samples: samples(0..<100)[...], unitsPerLSB: units)]
        try await store.commit(opening)

        closed.isOpen = false
        closed.count = 100
        closed.startMs = samples(0..<1)[0].timestampMs
        session.samples = 100
        session.expected = 103
        session.gaps = [GapRange(stream: "gyro", fromIndex: 100, toIndex: 102, fromMs: 1, toMs: 2, missing: 3, reason: .silent)]
        let head = Array(#"{"id":"\#(closed.id)","data":["#.utf8)
        let body = ChunkBody.encode(head: head, axisKeys: ["gx", "gy", "gz"], pointSuffix: [], samples: samples(0..<100)[...],
                                    backfilled: false, unitsPerLSB: units)
        var closing = StoreChanges()
        closing.sessions = [session]
        closing.chunks = [closed]
        closing.closedChunkIds = [closed.id]
        closing.documents = [
            DocumentWrite(path: try DocumentPath.chunk(closed.id), body: body, retain: true, device: device),
            DocumentWrite(path: try DocumentPath("records/\(session.id)"), body: Array(#"{"samples":100,"expected":103}"#.utf8), retain: true, device: device),
        ]
        closing.samples = [SampleAppend(chunkId: open.id, offset: 0, samples: samples(103..<133)[...], unitsPerLSB: units)]
        try await store.commit(closing)

        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: folder.file(GyroStore.fileName) + suffix, toPath: copy.file(GyroStore.fileName) + suffix)
        }
        let before = try ["", "-wal"].map { try Data(contentsOf: URL(fileURLWithPath: copy.file(GyroStore.fileName) + $0)) }
        XCTAssertGreaterThan(before[1].count, 0, "the commits are in the WAL")

        let lines = try dump(copy.path)
        XCTAssertEqual(lines.map { $0["kind"]?.string ?? "?" }, ["store", "session", "chunk", "chunk", "document", "outbox", "outbox"])
        XCTAssertEqual(lines[0]["integrity"]?.string, "ok")
        XCTAssertEqual(lines[0]["damagedRingSlots"]?.int, 0)

        let row = lines[1]
        XCTAssertEqual(row["id"]?.string, session.id)
        XCTAssertEqual(row["device"]?.string, device)
        XCTAssertEqual(row["samples"]?.int, 100, "the row as stored, not counted from the open chunk")
        XCTAssertEqual(row["expected"]?.int, 103)
        XCTAssertEqual(row["isOpen"]?.bool, true)
        XCTAssertEqual(row["gaps"]?[0]?["missing"]?.int, 3)
        XCTAssertEqual(row["gaps"]?[0]?["reason"]?.string, "silent")

        // The closed chunk's points are its document's, as a subscriber reads them.
        let document = try JSONValue(parsing: try XCTUnwrap(ChunkBody.json(body)))
        let published = try XCTUnwrap(document["data"]?.array).map { point in
            ["timestamp", "gx", "gy", "gz"].map { point[$0]?.double ?? .nan }
        }
        let first = lines[2]
        XCTAssertEqual(first["id"]?.string, closed.id)
        XCTAssertEqual(first["isOpen"]?.bool, false)
        XCTAssertEqual(first["document"]?.bool, true)
        XCTAssertEqual(first["count"]?.int, 100)
        let closedPoints = try XCTUnwrap(first["points"]?.array)
        XCTAssertEqual(closedPoints.map { point in (0..<4).map { point[$0]?.double ?? .nan } }, published)
        XCTAssertEqual(closedPoints.compactMap { $0[4]?.bool }, Array(repeating: false, count: 100))

        // The open chunk's samples, from the ring in the WAL.
        let second = lines[3]
        XCTAssertEqual(second["id"]?.string, open.id)
        XCTAssertEqual(second["isOpen"]?.bool, true)
        XCTAssertEqual(second["document"]?.bool, false)
        XCTAssertEqual(second["firstIndex"]?.int, 103)
        let openPoints = try XCTUnwrap(second["points"]?.array)
        XCTAssertEqual(openPoints.compactMap { $0[0]?.double }, samples(103..<133).map(\.timestampMs))
        XCTAssertEqual(openPoints.compactMap { $0[1]?.double }, samples(103..<133).map { ChunkBody.Point($0, backfilled: false).sample }.map { (Double($0.x) * 100_000).rounded() / 100_000 })

        XCTAssertEqual(lines[4]["path"]?.string, "records/\(session.id)")
        XCTAssertEqual(lines[4]["body"]?["expected"]?.int, 103)
        XCTAssertEqual(Set(lines[5...].compactMap { $0["documentPath"]?.string }), ["records/\(session.id)", "realtime_data/\(closed.id)"])

        let after = try ["", "-wal"].map { try Data(contentsOf: URL(fileURLWithPath: copy.file(GyroStore.fileName) + $0)) }
        XCTAssertEqual(after, before, "the dump wrote neither the file nor its WAL")
        _ = store
    }

    /// No store in the folder: an error naming the file, and no store is created.
    func testAFolderWithoutAStoreIsAnErrorAndStaysEmpty() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        XCTAssertThrowsError(try dump(folder.path)) { error in
            guard case StoreDumpError.noStore(let path) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(path, folder.file(GyroStore.fileName))
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), [])
    }
}
