import Foundation
@testable import GyroStore
import TestSupport
import XCTest

/// The sample ring in a store file: a commit of samples rewrites slots in place, slots are
/// reused once their chunks have closed, and the samples of open chunks read back after a restart.
final class SampleRingTests: XCTestCase {
    let units = 2000.0 / 32768

    func samples(_ range: Range<Int>) -> [StoredSample] {
        range.map { i in
            StoredSample(timestampMs: 1_700_000_000_000 + Double(i) * 10, x: Float(Double(i % 500) * units), y: Float(Double(-i % 77) * units), z: 0)
        }
    }

    func openChunks(_ store: GyroStore, sensors: Int) async throws -> [ChunkRecord] {
        var changes = StoreChanges()
        var chunks: [ChunkRecord] = []
        for sensor in 0..<sensors {
            let session = SessionRecord(id: "u___\(sensor)", userId: "u", device: "d\(sensor)", startMs: 0, localDate: "2026-01-01")
            changes.sessions.append(session)
            chunks.append(ChunkRecord(id: "u___\(sensor)_gyro_0", sessionId: session.id, stream: "gyro", seq: 0, odrHz: 100, range: 2000, firstIndex: 0))
        }
        changes.chunks = chunks
        try await store.commit(changes)
        return chunks
    }

    func appends(_ chunks: [ChunkRecord], _ range: Range<Int>) -> StoreChanges {
        var changes = StoreChanges()
        changes.samples = chunks.map { SampleAppend(chunkId: $0.id, offset: range.lowerBound, samples: samples(range)[...], unitsPerLSB: units) }
        return changes
    }

    func testACommitOfSamplesWritesOnlyItsSlotsPages() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let chunks = try await openChunks(store, sensors: 4)
        let wal = folder.file(GyroStore.fileName) + "-wal"
        for second in 0..<5 {
            let before = try walFrames(wal).count
            try await store.commit(appends(chunks, (second * 100)..<((second + 1) * 100)))
            let frames = try walFrames(wal).dropFirst(before)
            XCTAssertLessThanOrEqual(frames.count, RingSlot.pagesBytes(pageSize: GyroStore.newFilePageSize) / GyroStore.newFilePageSize,
                                     "second \(second): the slot's pages and no other: \(frames.map(\.page))")
            XCTAssertEqual(frames.last?.commit, true)
            XCTAssertNotEqual(frames.first?.page, 1, "not the database header")
        }
        for chunk in chunks {
            let stored = try await store.samples(ofChunk: chunk.id)
            XCTAssertEqual(stored.count, 500)
            XCTAssertEqual(stored.map(\.timestampMs), samples(0..<500).map(\.timestampMs))
        }
    }

    /// Slots whose chunks have closed are written again; those of an open chunk are not, and
    /// the ring grows rather than overwrite them. A reopened store reads the open chunk back.
    func testSlotsOfOpenChunksAreKeptAndTheRingGrows() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let commits = SampleRing.initialSlots * 3
        do {
            let store = try GyroStore.open(directory: folder.path, logger: testLogger())
            let chunks = try await openChunks(store, sensors: 2)
            let (kept, cycled) = (chunks[0], chunks[1])
            var closing = cycled
            for commit in 0..<commits {
                var changes = StoreChanges()
                let range = (commit * 10)..<((commit + 1) * 10)
                changes.samples = [SampleAppend(chunkId: kept.id, offset: range.lowerBound, samples: samples(range)[...], unitsPerLSB: units)]
                try await store.commit(changes)
                // The other chunk gets a slot of its own and closes within the next commit.
                var other = StoreChanges()
                other.samples = [SampleAppend(chunkId: closing.id, offset: 0, samples: samples(0..<10)[...], unitsPerLSB: units)]
                try await store.commit(other)
                var close = StoreChanges()
                closing.isOpen = false
                closing.count = 10
                close.chunks = [closing]
                close.closedChunkIds = [closing.id]
                closing = ChunkRecord(id: "u___1_gyro_\(commit + 1)", sessionId: cycled.sessionId, stream: "gyro", seq: commit + 1, odrHz: 100,
                                      range: 2000, firstIndex: 0)
                close.chunks.append(closing)
                try await store.commit(close)
            }
            let slots = try await store.read("counting slots") { db in try db.first("SELECT count(*) FROM sampleRing") { try $0.int(0) } }
            XCTAssertEqual(slots, SampleRing.initialSlots * 4, "doubled twice: the open chunk holds 192 slots; the closed chunks' slots were reused")
        }
        let reopened = try GyroStore.open(directory: folder.path, logger: testLogger())
        let stored = try await reopened.samples(ofChunk: "u___0_gyro_0")
        XCTAssertEqual(stored.map(\.timestampMs), samples(0..<(commits * 10)).map(\.timestampMs))
        let integrity = try await reopened.integrityCheck()
        XCTAssertEqual(integrity, "ok")
    }
}
