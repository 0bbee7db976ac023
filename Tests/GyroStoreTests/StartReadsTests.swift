import Foundation
import Glibc
import GyroStore
import TestSupport
import XCTest

/// What a gateway reads at start to continue its open sessions (their sessions and chunk rows)
/// does not bring the chunk bodies around those rows into the process.
final class StartReadsTests: XCTestCase {
    /// Resident bytes of the process's mappings of `path` (`/proc/self/smaps`).
    func residentBytes(of path: String) throws -> Int {
        // Read to its end: /proc files have no size, which String(contentsOfFile:) relies on.
        let handle = try XCTUnwrap(FileHandle(forReadingAtPath: "/proc/self/smaps"))
        defer { try? handle.close() }
        let smaps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        var inside = false, bytes = 0
        for line in smaps.split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-"), !line.hasPrefix("Rss") {
                inside = line.hasSuffix(path)
            } else if inside, line.hasPrefix("Rss:") {
                bytes += (Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0) * 1024
            }
        }
        return bytes
    }

    func testReadingAnOpenSessionsChunkRowsLeavesTheBodiesOutOfTheProcess() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let session = SessionRecord(id: "u___1", userId: "u", device: "d", startMs: 0, localDate: "2026-01-01")
        // Rows and bodies written together, as capture writes them: the chunk table's pages lie
        // between the bodies' pages all over the file.
        for batch in 0..<30 {
            var changes = StoreChanges()
            changes.sessions = [session]
            for index in batch * 20..<(batch + 1) * 20 {
                var chunk = ChunkRecord(id: "c\(index)", sessionId: session.id, stream: "gyro", seq: index, odrHz: 50, range: 2000,
                                        firstIndex: Int64(index * 1000))
                chunk.count = 1000
                chunk.isOpen = false
                changes.chunks.append(chunk)
                changes.documents.append(DocumentWrite(path: try DocumentPath("realtime_data/c\(index)"),
                                                       body: (0..<16_384).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) },
                                                       retain: false, device: "d"))
            }
            try await store.commit(changes)
        }
        let path = folder.path + "/" + GyroStore.fileName
        let fileBytes = try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
        XCTAssertGreaterThan(fileBytes, 6 << 20)

        // As after a boot: the file is read from the disk, not found in the page cache.
        let descriptor = Glibc.open(path, O_RDONLY)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        _ = fdatasync(descriptor)
        _ = posix_fadvise(descriptor, 0, 0, POSIX_FADV_DONTNEED)
        close(descriptor)

        let open = try await store.openSessions()
        XCTAssertEqual(open.first?.chunkIds.count, 600)
        let chunks = try await store.chunks(sessionId: session.id)
        XCTAssertEqual(chunks.count, 600)
        _ = try await store.openChunks(sessionId: session.id)
        // Through the readers' map these reads left 1.3 MB of the 7.7 MB file resident (the pages
        // around each row's page: the kernel's fault-around and readahead).
        let resident = try residentBytes(of: path)
        XCTAssertLessThan(resident, fileBytes / 20, "\(resident) of \(fileBytes) bytes of the file resident after reading 600 chunk rows")
    }
}
