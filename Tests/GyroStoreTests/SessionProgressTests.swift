import GyroStore
import TestSupport
import XCTest

/// An open session's counts are written apart from its full row; a commit that carries both for
/// one session (a failed commit retried with the next) must end with the newer counts.
final class SessionProgressTests: XCTestCase {
    func session(samples: Int64, chunkIds: [String] = []) -> SessionRecord {
        var record = SessionRecord(id: "u___1", userId: "u", device: "d", startMs: 0, localDate: "2026-01-01")
        record.samples = samples
        record.expected = samples
        record.lastSampleMs = Double(samples) * 10
        record.chunkIds = chunkIds
        return record
    }

    func testProgressUpdatesTheCountsAndKeepsTheRestOfTheRow() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        var first = StoreChanges()
        first.sessions = [session(samples: 10, chunkIds: ["a", "b"])]
        try await store.commit(first)
        var next = StoreChanges()
        next.progress = [SessionProgress(session(samples: 25))]
        try await store.commit(next)
        let stored = try await store.session(id: "u___1")
        XCTAssertEqual(stored?.samples, 25)
        XCTAssertEqual(stored?.expected, 25)
        XCTAssertEqual(stored?.lastSampleMs, 250)
        XCTAssertEqual(stored?.chunkIds, ["a", "b"], "the chunk list is not rewritten by progress")
    }

    func testAFullRowAfterOlderProgressWins() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        var retried = StoreChanges()
        retried.sessions = [session(samples: 5)]
        retried.progress = [SessionProgress(session(samples: 10))]
        var later = StoreChanges()
        later.sessions = [session(samples: 30, chunkIds: ["a"])]
        retried.append(later)
        XCTAssertTrue(retried.progress.isEmpty, "progress older than a full row of its session is dropped")
        try await store.commit(retried)
        let stored = try await store.session(id: "u___1")
        XCTAssertEqual(stored?.samples, 30)
        XCTAssertEqual(stored?.chunkIds, ["a"])
    }

    func testProgressAfterAnOlderFullRowWins() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        var retried = StoreChanges()
        retried.sessions = [session(samples: 5, chunkIds: ["a"])]
        var later = StoreChanges()
        later.progress = [SessionProgress(session(samples: 40))]
        retried.append(later)
        try await store.commit(retried)
        let stored = try await store.session(id: "u___1")
        XCTAssertEqual(stored?.samples, 40)
        XCTAssertEqual(stored?.chunkIds, ["a"])
    }
}
