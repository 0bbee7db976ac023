import Foundation
import GyroStore
import TestSupport
import XCTest
@testable import Capture

/// The data directory's filesystem fills up (a real tmpfs, the kernel's ENOSPC): the engine frees
/// space in the documented order, keeps memory bounded, records what it could not keep, and is
/// writable again once space returns.
final class DiskFullTests: XCTestCase {
    let sensor = SensorIdentity(device: "C4:BE:84:00:00:01", userId: "user-1")
    let t0 = 1_795_000_000_000.0

    func samples(_ range: Range<Int64>) -> [StoredSample] {
        range.map { StoredSample(timestampMs: t0 + Double($0) * 10, x: Float($0), y: 0, z: 1) }
    }

    /// Appends `range` in notifications of 10; a commit that fails is the engine's to retry.
    func feed(_ engine: CaptureEngine, _ range: Range<Int64>) async {
        for start in stride(from: range.lowerBound, to: range.upperBound, by: 10) {
            let end = min(start + 10, range.upperBound)
            try? await engine.append(sensor: sensor, stream: .gyro, odrHz: 100, range: 2000, firstIndex: start, samples: samples(start..<end))
        }
    }

    func testAFullDiskFreesSpaceBoundsMemoryRecordsTheLossAndRecovers() async throws {
        let disk: SmallFilesystem
        do { disk = try SmallFilesystem(bytes: 8 << 20) } catch let error as SmallFilesystem.Unavailable { throw XCTSkip(error.description) }
        let directory = disk.path + "/data"
        let store = try GyroStore.open(directory: directory, maxBytes: 1 << 30, reserveBytes: 512 << 10, logger: testLogger())
        XCTAssertEqual(store.reserve?.isFilled, true)
        var rules = CaptureRules(chunkSize: 500, commitInterval: .milliseconds(20))
        rules.fullBufferSamples = 1000
        let engine = CaptureEngine(store: store, rules: rules, calendar: PeriodCalendar(timeZone: .utc),
                                   logger: testLogger())
        let session = try await engine.startSession(sensor: sensor, atMs: t0)
        await feed(engine, 0..<5000)
        try await engine.flush()
        var condition = await engine.storeCondition
        XCTAssertEqual(condition, .writable)

        // The disk fills up (something else wrote to it): nothing is published, so making room
        // means evicting the oldest unpublished chunks.
        disk.fill()
        var fed: Int64 = 5000
        var mostBuffered: Int64 = 0
        // Until the store says full (how soon depends on how much each commit writes), then on
        // for a while in that state; bounded, so that a store that never fills fails below.
        var fullSince: Int64?
        while fed < 400_000, fed < (fullSince ?? fed) + 20_000 {
            await feed(engine, fed..<fed + 500)
            fed += 500
            mostBuffered = max(mostBuffered, await engine.failedSamples + engine.uncommittedSamples)
            if fullSince == nil, await engine.storeCondition.isFull { fullSince = fed }
        }
        condition = await engine.storeCondition
        XCTAssertTrue(condition.isFull, "\(condition)")
        XCTAssertEqual(store.reserve?.isFilled, false, "the reserve was given up for the writes that free space")
        let evicted = try await store.counter(GyroStore.evictedCounter)
        XCTAssertGreaterThan(evicted, 0, "room was made by evicting unpublished chunks")
        XCTAssertLessThanOrEqual(mostBuffered, Int64(rules.fullBufferSamples + rules.chunkSize + 10),
                                 "samples waiting for a commit stay bounded while full")

        // Space comes back: the next commit succeeds and the store is writable again.
        disk.unfill()
        await feed(engine, fed..<fed + 500)
        fed += 500
        try await engine.flush()
        condition = await engine.storeCondition
        XCTAssertEqual(condition, .writable)
        XCTAssertEqual(store.reserve?.isFilled, true)

        _ = try await engine.stopSession(device: sensor.device, reason: "test")
        try await engine.flush()
        let reopened = try GyroStore.open(directory: directory, maxBytes: 1 << 30, reserveBytes: 512 << 10, logger: testLogger())
        let found = try await reopened.session(id: session.id)
        let stored = try XCTUnwrap(found)
        XCTAssertEqual(stored.expected, fed, "expected covers every sample the sensor sent")
        XCTAssertEqual(stored.expected - stored.samples, stored.gaps.reduce(0) { $0 + $1.missing })
        XCTAssertTrue(stored.gaps.allSatisfy { $0.reason == .storeFull }, "\(stored.gaps.map(\.reason))")
        XCTAssertGreaterThan(stored.samples, 0)
        let integrity = try await reopened.integrityCheck()
        XCTAssertEqual(integrity, "ok")
        let counters = await engine.counters
        XCTAssertEqual(counters.storeFullEpisodes, 1)
    }
}
