@testable import Capture
import Foundation
import GyroStore
import TestSupport
import XCTest

/// The engine runs a retention pass batch by batch, the commit lock free between two batches:
/// capture commits there, and the pass ends as the same pass in one transaction would.
final class RetentionBatchesTests: XCTestCase {
    static let sensor = SensorIdentity(device: "C4:BE:84:00:00:01", userId: "user-1")
    static let t0 = 1_795_000_000_000.0

    /// What happened at the first batch boundary: the pass's transactions so far, and the commits
    /// capture had made before and after its own commit there.
    actor Boundary {
        var seen: (transactions: Int, commitsBefore: Int64, commitsAfter: Int64)?
        func note(_ value: (Int, Int64, Int64)) { if seen == nil { seen = value } }
    }

    static func feed(_ engine: CaptureEngine, _ range: Range<Int64>) async throws {
        let samples = range.map { i -> StoredSample in
            let noise = UInt64(i) &* 0x9E37_79B9_7F4A_7C15
            return StoredSample(timestampMs: t0 + Double(i) * 20, x: Float(i), y: Float(noise >> 44) / 512 - 1024, z: Float((noise >> 24) & 0xFFFFF) / 512)
        }
        try await engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: range.lowerBound, samples: samples)
    }

    /// 30 closed chunks of an open session, nothing published, at about half the room they need;
    /// one pass in transactions of `batchChunks`; 50 more samples committed at the first batch
    /// boundary (`between`), or after the pass (the reference). Returns the stored session and record.
    func run(batchChunks: Int, between: Bool) async throws -> (RetentionReport, SessionRecord?, [UInt8]?, Boundary) {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, maxBytes: 160 << 10, logger: testLogger())
        let engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: 500, commitInterval: .seconds(60)),
                                   calendar: PeriodCalendar(timeZone: .utc), logger: testLogger())
        let session = try await engine.startSession(sensor: Self.sensor, atMs: Self.t0)
        try await Self.feed(engine, 0..<15_010)
        try await engine.flush()
        let boundary = Boundary()
        await engine.observeRetentionBatches(chunks: batchChunks) { report in
            guard between, await boundary.seen == nil else { return }
            let before = await engine.counters.commits
            try? await Self.feed(engine, 15_010..<15_060)
            try? await engine.flush()
            await boundary.note((report.transactions, before, await engine.counters.commits))
        }
        let report = try await engine.enforceRetention()
        if !between { try await Self.feed(engine, 15_010..<15_060) }
        try await engine.flush()
        return (report, try await store.session(id: session.id), try await store.document(try DocumentPath("records/\(session.id)")), boundary)
    }

    func testCaptureCommitsBetweenTwoBatchesAndThePassEndsAsOneTransactionWould() async throws {
        let (one, referenceSession, referenceRecord, _) = try await run(batchChunks: .max, between: false)
        let (several, session, record, boundary) = try await run(batchChunks: 2, between: true)
        XCTAssertEqual(one.transactions, 1)
        XCTAssertGreaterThan(one.evictedUnpublishedChunks, 4, "more than two batches of evictions")

        let observed = await boundary.seen
        let seen = try XCTUnwrap(observed, "the observer ran between two batches")
        XCTAssertEqual(seen.transactions, 1, "right after the first batch")
        XCTAssertEqual(seen.commitsAfter, seen.commitsBefore + 1, "capture's commit ran there, before the second batch")
        XCTAssertGreaterThan(several.transactions, 2, "the pass went on after the commit")

        // Chunk ids are new in each run: the chunks compare by what they held.
        XCTAssertEqual(several.evictions.map(\.gaps), one.evictions.map(\.gaps), "the same chunks evicted, with the same samples and gaps")
        XCTAssertEqual(several.prunedChunks, one.prunedChunks)
        let stored = try XCTUnwrap(session), reference = try XCTUnwrap(referenceSession)
        XCTAssertEqual(stored.gaps, reference.gaps)
        XCTAssertEqual(stored.gaps.map(\.reason), [.storeFull], "evictions of several batches merge into one gap")
        XCTAssertEqual([stored.samples, stored.expected, Int64(stored.chunkIds.count)],
                       [reference.samples, reference.expected, Int64(reference.chunkIds.count)])
        XCTAssertEqual(stored.samples, 15_060 - Int64(one.evictedUnpublishedChunks * 500), "the samples committed between batches are counted")
        XCTAssertEqual(stored.expected - stored.samples, stored.gaps.reduce(0) { $0 + $1.missing })
        let written = try jsonObject(record), referenceWritten = try jsonObject(referenceRecord)
        // The reference's record was rendered before its last 50 samples came (an open session's
        // documents are paced); the batched run's last batch rendered it after the commit between batches.
        XCTAssertEqual(written["samples"] as? Int, Int(stored.samples), "the last batch read the row capture committed")
        XCTAssertEqual(written["gaps"] as? NSArray, referenceWritten["gaps"] as? NSArray)
        XCTAssertEqual((written["gscope_data"] as? [String])?.count, reference.chunkIds.count)
    }
}
