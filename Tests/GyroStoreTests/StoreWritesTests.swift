import Foundation
@testable import GyroStore
import TestSupport
import XCTest

/// The store's write footprint: a WAL whose blocks exist before the first commit, kept across
/// restarts, and the write counter the status and metrics show.
final class StoreWritesTests: XCTestCase {
    /// A fresh store's WAL is written to its working size at open, so commits overwrite it in
    /// place; the padding is not taken for frames, and the file survives a clean close.
    func testTheWALIsWrittenToItsWorkingSizeAndKept() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let wal = folder.file(GyroStore.fileName) + "-wal"
        do {
            let store = try GyroStore.open(directory: folder.path, logger: testLogger())
            let working = try await store.write { db in try WALFile.workingSize(db) }
            XCTAssertGreaterThanOrEqual(try fileSize(wal), working)
            XCTAssertGreaterThanOrEqual(try allocatedBytes(wal), working - 4096, "written blocks, not a sparse file")
            var changes = StoreChanges()
            changes.documents = [DocumentWrite(path: try DocumentPath("records/a"), body: Array("{\"a\":1}".utf8), retain: true, device: nil)]
            try await store.commit(changes)
            XCTAssertGreaterThanOrEqual(try fileSize(wal), working, "a commit does not shrink it")
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: wal), "the WAL is kept after the store closes")
        let reopened = try GyroStore.open(directory: folder.path, logger: testLogger())
        let ids = try await reopened.documentIds(inCollection: "records")
        XCTAssertEqual(ids, ["a"])
        let integrity = try await reopened.integrityCheck()
        XCTAssertEqual(integrity, "ok")
    }

    /// A WAL left by a crash keeps its frames: only bytes past its end are added at open.
    func testPresizingKeepsWhatTheWALHolds() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.file("x-wal")
        let content = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try content.write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(WALFile.presize(path: path, to: 100_000), 95_000)
        let after = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertEqual(after.count, 100_000)
        XCTAssertEqual(after.prefix(5000), content)
        XCTAssertTrue(after.dropFirst(5000).allSatisfy { $0 == 0 })
        XCTAssertEqual(WALFile.presize(path: path, to: 50_000), 0, "a larger WAL is left alone")
    }

    func testWriteBytesAreReadFromProcIO() {
        let text = Array("rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 123456\ncancelled_write_bytes: 0\n".utf8)
        XCTAssertEqual(StoreWrites.parseWriteBytes(text), 123_456)
        XCTAssertNil(StoreWrites.parseWriteBytes(Array("write_bytes: 12x\n".utf8)))
        XCTAssertNil(StoreWrites.parseWriteBytes(Array("write_bytes: \n".utf8)))
        XCTAssertNil(StoreWrites.parseWriteBytes(Array("rchar: 1\n".utf8)))
        XCTAssertNil(StoreWrites.parseWriteBytes(Array("write_bytes: 99999999999999999999999\n".utf8)))
    }

    func testAFileStoreCountsWhatItWrites() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let writes = try XCTUnwrap(store.writes, "Linux has /proc/self/io")
        XCTAssertNil(writes.perDay(), "no daily rate in the first minute")
        let before = try XCTUnwrap(writes.written())
        var changes = StoreChanges()
        changes.documents = [DocumentWrite(path: try DocumentPath("records/big"), body: Array(repeating: 0x41, count: 200_000), retain: true, device: nil)]
        try await store.commit(changes)
        XCTAssertGreaterThanOrEqual(try XCTUnwrap(writes.written()) - before, 200_000)
        XCTAssertNil(try GyroStore.inMemory().writes)
    }

    private func fileSize(_ path: String) throws -> Int {
        try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }

    private func allocatedBytes(_ path: String) throws -> Int {
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0)
        return Int(info.st_blocks) * 512
    }
}
