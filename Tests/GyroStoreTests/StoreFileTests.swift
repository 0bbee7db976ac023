import Foundation
import GRDB
import GyroStore
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
        let queue = try DatabaseQueue(path: folder.file(GyroStore.fileName))
        try await queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try queue.close()
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
        }
    }
}
