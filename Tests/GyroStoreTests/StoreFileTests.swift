import Foundation
@testable import GyroStore
import TestSupport
import XCTest

final class StoreFileTests: XCTestCase {
    func testACorruptFileIsMovedAsideNotDeleted() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file(GyroStore.fileName)
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try garbage.write(to: URL(fileURLWithPath: path))
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        XCTAssertEqual(store.quarantined.count, 1)
        let moved = try XCTUnwrap(store.quarantined.first)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: moved)), garbage, "the damaged file is kept byte for byte")
        let integrity = try await store.integrityCheck()
        XCTAssertEqual(integrity, "ok")
    }

    /// A commit that returned has reached the disk: the writer runs with synchronous = FULL (2).
    /// (GRDB's pool used to set NORMAL when it switched to WAL, after the connection was prepared.)
    func testTheWriterSyncsEveryCommit() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        func level() async throws -> Int? { try await store.write { db in try db.first("PRAGMA synchronous") { try $0.int(0) } } }
        let opened = try await level()
        XCTAssertEqual(opened, 2)
        // Acknowledgements are committed without a sync (a lost one is a resend), then FULL again.
        var changes = StoreChanges()
        changes.documents = [DocumentWrite(path: try DocumentPath("records/a"), body: Array("{}".utf8), retain: true, device: nil)]
        try await store.commit(changes)
        let row = try await store.pendingOutbox(after: 0, limit: 1)
        try await store.acknowledge(row.map(\.seq))
        let afterAcknowledging = try await level()
        XCTAssertEqual(afterAcknowledging, 2)
        let left = try await store.pendingOutbox(after: 0, limit: 1)
        XCTAssertEqual(left.count, 0)
    }

    /// Freed pages are not zeroed and written (Debian's SQLite defaults to secure_delete = ON):
    /// deleting chunk documents must not write their size again to the WAL, least of all when
    /// the store is being evicted because the disk is full.
    func testDeletingLargeDocumentsWritesLittleToTheWAL() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let paths = try (0..<40).map { try DocumentPath("realtime_data/c\($0)") }
        var writes = StoreChanges()
        writes.documents = paths.map { DocumentWrite(path: $0, body: Array(repeating: 0x5A, count: 140_000), retain: false, device: nil) }
        try await store.commit(writes)
        try await store.writeWithoutTransaction { db in try db.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
        var deletions = StoreChanges()
        deletions.deletions = paths
        try await store.commit(deletions)
        let framesWritten = try await store.writeWithoutTransaction { db in
            try db.first("PRAGMA wal_checkpoint(PASSIVE)") { try $0.int(1) } ?? -1
        }
        // 40 bodies span ~1,400 overflow pages; zeroing them would write every one.
        XCTAssertGreaterThanOrEqual(framesWritten, 0)
        XCTAssertLessThan(framesWritten, 140, "pages written to the WAL by deleting 40 chunk documents")
    }

    func testADamagedPageIsDetectedAtOpen() async throws {
        let folder = try TemporaryDirectory()
        do {
            let store = try GyroStore.open(directory: folder.path, logger: testLogger())
            var changes = StoreChanges()
            for index in 0..<200 {
                changes.documents.append(DocumentWrite(path: try DocumentPath("records/r\(index)"), body: Array(repeating: 65, count: 3000), retain: true, device: nil))
            }
            try await store.commit(changes)
        }
        // Fold the WAL into the file, then scribble over a page in the middle of it.
        do {
            let connection = try SQLiteConnection(path: folder.file(GyroStore.fileName))
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: folder.file(GyroStore.fileName)))
        try handle.seek(toOffset: 4096 * 3)
        handle.write(Data(repeating: 0xA5, count: 4096 * 2))
        try handle.close()
        let reopened = try GyroStore.open(directory: folder.path, logger: testLogger())
        XCTAssertEqual(reopened.quarantined.count, 1, "quick_check finds the damage and the file is moved aside")
        let ids = try await reopened.documentIds(inCollection: "records")
        XCTAssertEqual(ids, [])
    }

    func testAnUnwritableDirectoryIsAClearError() throws {
        XCTAssertThrowsError(try GyroStore.open(directory: "/proc/gyrogate-cannot-exist", logger: testLogger())) { error in
            XCTAssertTrue("\(error)".contains("cannot use data directory /proc/gyrogate-cannot-exist"), "\(error)")
            XCTAssertFalse("\(error)".contains("CocoaError"), "the system's reason, not the error's structure: \(error)")
        }
    }
}
