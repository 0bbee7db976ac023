import Foundation
@testable import GyroStore
import TestSupport
import XCTest
@testable import Capture

/// Whenever retention evicts unpublished data, the store's condition says why: full when the
/// disk has no room for it, at its limit when `retention.maxStoreBytes` is what it reached; and
/// it returns to writable when that is over (docs/durability.md, "Disk full").
final class StoreConditionTests: XCTestCase {
    let sensor = SensorIdentity(device: "C4:BE:84:00:00:01", userId: "user-1")
    let t0 = 1_795_000_000_000.0
    let chunkSize = 500

    /// `range` at 50 Hz in notifications of 50, with values that compact little (~7 KB a chunk).
    func feed(_ engine: CaptureEngine, _ range: Range<Int64>) async throws {
        for start in stride(from: range.lowerBound, to: range.upperBound, by: 50) {
            let samples = (start..<min(start + 50, range.upperBound)).map { i -> StoredSample in
                let noise = UInt64(i) &* 0x9E37_79B9_7F4A_7C15
                return StoredSample(timestampMs: t0 + Double(i) * 20, x: Float(i), y: Float(noise >> 44) / 512 - 1024, z: Float((noise >> 24) & 0xFFFFF) / 512)
            }
            try await engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: start, samples: samples)
        }
    }

    func engine(_ store: GyroStore) -> CaptureEngine {
        CaptureEngine(store: store, rules: CaptureRules(chunkSize: chunkSize, commitInterval: .seconds(60)),
                      calendar: PeriodCalendar(timeZone: .utc), logger: testLogger())
    }

    func testRetentionThatEvictsForWantOfDiskPutsTheStoreInTheFullStateUntilSpaceReturns() async throws {
        let disk: SmallFilesystem
        do { disk = try SmallFilesystem(bytes: 12 << 20) } catch let error as SmallFilesystem.Unavailable { throw XCTSkip(error.description) }
        let store = try GyroStore.open(directory: disk.path + "/data", maxBytes: 1 << 30, reserveBytes: 1 << 20, logger: testLogger())
        let engine = engine(store)
        let session = try await engine.startSession(sensor: sensor, atMs: t0)
        try await feed(engine, 0..<80_000)  // 160 chunks, ~1.1 MB, nothing published
        try await engine.flush()
        try await store.writeWithoutTransaction { db in try db.execute("PRAGMA wal_checkpoint(PASSIVE)") }

        // Less free than the reserve, but the reserve allocated: room, and no eviction.
        disk.fill(leaving: 256 << 10)
        var report = try await engine.enforceRetention()
        XCTAssertEqual(report.evictedUnpublishedChunks, 0, "\(report)")
        var condition = await engine.storeCondition
        XCTAssertEqual(condition, .writable)

        // The reserve gone and its room taken by another program: no room for what the store holds.
        store.reserve?.release()
        disk.fill(leaving: 256 << 10)
        report = try await engine.enforceRetention()
        XCTAssertTrue(report.evictedForLackOfDisk, "\(report)")
        condition = await engine.storeCondition
        guard case .full(_, let reason) = condition else { return XCTFail("\(condition)") }
        XCTAssertTrue(reason.contains("the disk has no room"), reason)
        var counters = await engine.counters
        XCTAssertEqual(counters.storeFullEpisodes, 1, "no commit failed, yet the disk is full")
        let evicted = try await store.counter(GyroStore.evictedCounter)
        XCTAssertEqual(evicted, report.evictedUnpublishedChunks)

        // Still no room: still full, one episode.
        report = try await engine.enforceRetention()
        condition = await engine.storeCondition
        XCTAssertTrue(condition.isFull)
        counters = await engine.counters
        XCTAssertEqual(counters.storeFullEpisodes, 1)

        // Space comes back: writable, the reserve allocated again, nothing further evicted.
        disk.unfill()
        report = try await engine.enforceRetention()
        XCTAssertEqual(report.evictedUnpublishedChunks, 0)
        condition = await engine.storeCondition
        XCTAssertEqual(condition, .writable)
        XCTAssertEqual(store.reserve?.isFilled, true)
        let evictedAfter = try await store.counter(GyroStore.evictedCounter)
        XCTAssertEqual(evictedAfter, evicted)

        let stored = try await store.session(id: session.id)
        let record = try XCTUnwrap(stored)
        XCTAssertEqual(record.expected - record.samples, record.gaps.reduce(0) { $0 + $1.missing })
        XCTAssertEqual(record.gaps.map(\.reason), [.storeFull])
    }

    func testRetentionAtMaxStoreBytesSaysAtLimitNotFull() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try GyroStore.open(directory: folder.path, maxBytes: 160 << 10, logger: testLogger())
        let engine = engine(store)
        _ = try await engine.startSession(sensor: sensor, atMs: t0)
        try await feed(engine, 0..<15_000)  // 30 chunks, about twice the limit
        try await engine.flush()

        let report = try await engine.enforceRetention()
        XCTAssertGreaterThan(report.evictedUnpublishedChunks, 0)
        XCTAssertEqual(report.limit.bound, .configured)
        var condition = await engine.storeCondition
        XCTAssertEqual(condition, .atLimit(sinceMs: try XCTUnwrap(condition.atLimitSince), limitBytes: 160 << 10))
        let counters = await engine.counters
        XCTAssertEqual(counters.storeFullEpisodes, 0, "the disk has room: not full")

        // A pass with nothing to evict: back to writable.
        try await engine.enforceRetention()
        condition = await engine.storeCondition
        XCTAssertEqual(condition, .writable)
    }
}

extension StoreCondition {
    var atLimitSince: Double? {
        if case .atLimit(let since, _) = self { return since }
        return nil
    }
}
