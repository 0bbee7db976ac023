import Foundation
@testable import GyroStore
import TestSupport
import XCTest

/// Retention's working limit counts the reserve once: its blocks are room while it holds them,
/// and room to keep free once it is released (`WorkingLimit`, docs/durability.md "Disk full").
final class WorkingLimitTests: XCTestCase {
    let mib = 1 << 20
    let reserve = 4 << 20

    func space(file: Int, free: Int, held: Int) -> StoreSpace {
        StoreSpace(freeBytes: free, totalBytes: 30 * mib, fileBytes: file, reserveHeldBytes: held)
    }

    /// The disk: 30 MB, about 2 MB free, the reserve allocated. The limit used to be
    /// `file + free − reserve`, 2 MiB below the file, so every pass evicted unpublished chunks.
    func testAnAllocatedReserveIsRoomNotADebt() {
        let limit = WorkingLimit(maxBytes: 1 << 30, space: space(file: 20 * mib, free: 2 * mib, held: reserve), reserveBytes: reserve)
        XCTAssertEqual(limit.diskRoomBytes, 2 * mib, "the free space itself: the reserve's blocks are the store's")
        XCTAssertEqual(limit.bytes, 22 * mib, "the file can still grow by the free space")
        XCTAssertEqual(limit.bound, .disk)
    }

    /// Released, the reserve's blocks are part of the free space, and that much must stay free
    /// to allocate it again.
    func testAReleasedReserveIsKeptFreeOutOfTheFreeSpace() {
        let limit = WorkingLimit(maxBytes: 1 << 30, space: space(file: 20 * mib, free: 5 * mib, held: 0), reserveBytes: reserve)
        XCTAssertEqual(limit.diskRoomBytes, mib)
        XCTAssertEqual(limit.bytes, 21 * mib)
        let tight = WorkingLimit(maxBytes: 1 << 30, space: space(file: 20 * mib, free: 3 * mib, held: 0), reserveBytes: reserve)
        XCTAssertEqual(tight.diskRoomBytes, -mib, "less than the reserve free: the store must shrink into its file")
        XCTAssertEqual(tight.bytes, 19 * mib)
    }

    /// The same disk gives the same limit whether the reserve's 4 MiB are its blocks or free space.
    func testReleasingTheReserveDoesNotMoveTheLimit() {
        let held = WorkingLimit(maxBytes: 1 << 30, space: space(file: 20 * mib, free: 2 * mib, held: reserve), reserveBytes: reserve)
        let released = WorkingLimit(maxBytes: 1 << 30, space: space(file: 20 * mib, free: 2 * mib + reserve, held: 0), reserveBytes: reserve)
        XCTAssertEqual(held, released)
    }

    /// The live pages retention measures leave the sample ring out, so the disk's bound does too.
    func testTheRingsSlotsAreNotRoomForLivePages() {
        let limit = WorkingLimit(maxBytes: 1 << 30, space: space(file: 20 * mib, free: 0, held: reserve), reserveBytes: reserve,
                                 ringBytes: 256 << 10)
        XCTAssertEqual(limit.bytes, 20 * mib - (256 << 10))
    }

    func testTheConfiguredLimitBindsWhenTheDiskHasMoreRoom() {
        let limit = WorkingLimit(maxBytes: 10 * mib, space: space(file: 8 * mib, free: 100 * mib, held: reserve), reserveBytes: reserve)
        XCTAssertEqual(limit, WorkingLimit(bytes: 10 * mib, bound: .configured, diskRoomBytes: 100 * mib))
        XCTAssertEqual(WorkingLimit(maxBytes: 10 * mib, space: nil, reserveBytes: reserve), WorkingLimit(bytes: 10 * mib, bound: .configured),
                       "an in-memory store has only its configured limit")
    }

    func testTheLimitIsNeverNegative() {
        let limit = WorkingLimit(maxBytes: 1 << 30, space: space(file: mib, free: 0, held: 0), reserveBytes: reserve)
        XCTAssertEqual(limit.bytes, 0)
        XCTAssertEqual(limit.bound, .disk)
    }

    /// The full state ends once the disk has room for the reserve and as much beside it.
    func testTheDiskHasRoomAgainWithTwiceTheReserve() {
        XCTAssertFalse(WorkingLimit.diskHasRoomAgain(space(file: 0, free: 2 * reserve - 1, held: 0), reserveBytes: reserve))
        XCTAssertTrue(WorkingLimit.diskHasRoomAgain(space(file: 0, free: 2 * reserve, held: 0), reserveBytes: reserve))
        XCTAssertFalse(WorkingLimit.diskHasRoomAgain(space(file: 0, free: reserve - 1, held: reserve), reserveBytes: reserve))
        XCTAssertTrue(WorkingLimit.diskHasRoomAgain(space(file: 0, free: reserve, held: reserve), reserveBytes: reserve))
    }

    /// The reserve's blocks as the store measures them: all of them while allocated, none once released.
    func testTheStoreMeasuresTheReservesBlocks() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try GyroStore.open(directory: folder.path, maxBytes: 1 << 30, reserveBytes: 1 << 20, logger: testLogger())
        let reserve = try XCTUnwrap(store.reserve)
        XCTAssertEqual(reserve.heldBytes, 1 << 20)
        XCTAssertEqual(store.space()?.reserveHeldBytes, 1 << 20)
        let whileHeld = try await store.workingLimit()
        reserve.release()
        XCTAssertEqual(store.space()?.reserveHeldBytes, 0)
        let released = try await store.workingLimit()
        // The disk's free space is shared with other tests: compare what the store counts, not the free bytes.
        let heldRoom = try XCTUnwrap(whileHeld.diskRoomBytes), releasedRoom = try XCTUnwrap(released.diskRoomBytes)
        XCTAssertLessThan(abs(heldRoom - releasedRoom), 64 << 20, "the same room either way, give or take other writers")
        XCTAssertTrue(reserve.fill())
        XCTAssertEqual(reserve.heldBytes, 1 << 20)
    }

    /// On a disk with less free space than the reserve, but the reserve allocated, retention
    /// evicts nothing: the disk still has room for the file to grow.
    func testRetentionEvictsNothingWhileTheDiskHasRoom() async throws {
        let disk: SmallFilesystem
        do { disk = try SmallFilesystem(bytes: 12 << 20) } catch let error as SmallFilesystem.Unavailable { throw XCTSkip(error.description) }
        let store = try GyroStore.open(directory: disk.path + "/data", maxBytes: 1 << 30, reserveBytes: 2 << 20, logger: testLogger())
        XCTAssertEqual(store.reserve?.isFilled, true)
        try await writeUnpublishedChunks(store, count: 40)
        // Into the file: pages still only in the WAL would need room at the next checkpoint,
        // which the file's size does not show and the limit rightly counts against the disk.
        try await store.writeWithoutTransaction { db in try db.execute("PRAGMA wal_checkpoint(PASSIVE)") }
        disk.fill(leaving: 512 << 10)
        let report = try await store.enforceRetention { _ in [] }
        XCTAssertEqual(report.evictedUnpublishedChunks, 0, "less free than the reserve is still room: \(report)")
        XCTAssertEqual(report.limit.bound, .disk)
        XCTAssertLessThanOrEqual(report.usedBytes, report.limit.bytes)

        // The reserve released and the disk taken by someone else: now the disk truly has no room.
        store.reserve?.release()
        disk.fill(leaving: 512 << 10)
        let squeezed = try await store.enforceRetention { _ in [] }
        XCTAssertTrue(squeezed.evictedForLackOfDisk, "\(squeezed)")
        XCTAssertLessThanOrEqual(squeezed.usedBytes, squeezed.limit.bytes)
    }

    /// `count` closed chunks with 64 KiB documents, none published.
    func writeUnpublishedChunks(_ store: GyroStore, count: Int) async throws {
        var changes = StoreChanges()
        changes.sessions = [SessionRecord(id: "u___1", userId: "u", device: "d", startMs: 0, localDate: "2026-01-01")]
        for index in 0..<count {
            var chunk = ChunkRecord(id: "c\(index)", sessionId: "u___1", stream: "gyro", seq: index, odrHz: 50, range: 2000, firstIndex: Int64(index * 100))
            chunk.isOpen = false
            chunk.count = 100
            chunk.startMs = Double(index * 100)
            chunk.endMs = Double(index * 100 + 99)
            changes.chunks.append(chunk)
            changes.documents.append(DocumentWrite(path: try DocumentPath("realtime_data/c\(index)"),
                                                   body: (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ index) }, retain: false, device: "d"))
        }
        try await store.commit(changes)
    }
}
