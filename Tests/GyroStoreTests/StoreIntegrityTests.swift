import Foundation
@testable import GyroStore
import TestSupport
import XCTest

/// Opening reads what the store must trust to start and what the last run wrote, not the whole
/// file; the whole file is checked in the background, and a store found damaged anywhere is
/// refused: no more writes, and the next open moves it aside (docs/durability.md, "Corruption").
final class StoreIntegrityTests: XCTestCase {
    /// 400 records documents of 3,000 bytes: a document table of hundreds of pages.
    func writeRecords(_ directory: String, count: Int = 400) async throws {
        let store = try GyroStore.open(directory: directory, logger: testLogger())
        var changes = StoreChanges()
        for index in 0..<count {
            changes.documents.append(DocumentWrite(path: try DocumentPath("records/r\(index)"), body: Array(repeating: 65, count: 3000),
                                                   retain: true, device: nil))
        }
        try await store.commit(changes)
    }

    /// Folds the WAL into the file and removes it, as a store closed long ago would be.
    func checkpoint(_ directory: String) throws {
        let connection = try SQLiteConnection(path: directory + "/" + GyroStore.fileName)
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    /// A leaf page of the document table far from both of its edges, found with SQLite's dbstat.
    func middleLeafPage(_ directory: String) throws -> Int {
        let connection = try SQLiteConnection(path: directory + "/" + GyroStore.fileName)
        let leaves: [Int]
        do {
            leaves = try connection.all("SELECT pageno FROM dbstat WHERE name = 'document' AND pagetype = 'leaf' ORDER BY path") { try $0.int(0) }
        } catch {
            throw XCTSkip("this SQLite has no dbstat table (SQLITE_ENABLE_DBSTAT_VTAB): \(error)")
        }
        XCTAssertGreaterThan(leaves.count, 20)
        return leaves[leaves.count / 2]
    }

    func overwrite(page: Int, of directory: String, pageSize: Int = 1024, with byte: UInt8 = 0xA5) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/" + GyroStore.fileName))
        try handle.seek(toOffset: UInt64((page - 1) * pageSize))
        handle.write(Data(repeating: byte, count: pageSize))
        try handle.close()
    }

    /// Damage in the middle of a table is not read at open (that would be the whole file), but
    /// the background check finds it: the store refuses writes with an error naming the fix,
    /// leaves a marker, and the next open moves the file aside.
    func testDamageTheOpenDoesNotReadIsFoundInTheBackgroundAndTheStoreRefused() async throws {
        let folder = try TemporaryDirectory()
        try await writeRecords(folder.path)
        try checkpoint(folder.path)
        try overwrite(page: try middleLeafPage(folder.path), of: folder.path)

        do {
            let store = try GyroStore.open(directory: folder.path, logger: testLogger())
            XCTAssertEqual(store.quarantined, [], "the open reads its edges only")
            XCTAssertEqual(store.integrity, .openChecked)
            let found = await store.verifyIntegrity()
            guard case .damaged(_, let reason) = found else { return XCTFail("\(found)") }
            XCTAssertTrue(reason.contains("quick_check"), reason)
            XCTAssertTrue(FileManager.default.fileExists(atPath: folder.file(GyroStore.fileName + ".damaged")), "the damage outlives the process")
            let damage = await store.untilDamaged()
            XCTAssertEqual(damage, reason)

            var changes = StoreChanges()
            changes.documents = [DocumentWrite(path: try DocumentPath("records/new"), body: Array("{}".utf8), retain: true, device: nil)]
            do {
                try await store.commit(changes)
                XCTFail("a damaged store took a write")
            } catch {
                XCTAssertTrue("\(error)".contains("the store file is damaged"), "\(error)")
                XCTAssertTrue("\(error)".contains("moves the file aside"), "the error names the fix: \(error)")
            }
        }

        let reopened = try GyroStore.open(directory: folder.path, logger: testLogger())
        XCTAssertTrue(reopened.quarantined.contains { $0.contains(".corrupt-") && $0.hasSuffix(".damaged") }, "\(reopened.quarantined)")
        XCTAssertTrue(reopened.quarantined.contains { $0.contains(".corrupt-") && $0.last?.isNumber == true }, "\(reopened.quarantined)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder.file(GyroStore.fileName + ".damaged")))
        let ids = try await reopened.documentIds(inCollection: "records")
        XCTAssertEqual(ids, [], "a new store")
        let integrity = try await reopened.integrityCheck()
        XCTAssertEqual(integrity, "ok")
    }

    /// A read that meets damage SQLite detects marks the store as the background check would.
    func testAReadThatMeetsDamageRefusesTheStore() async throws {
        let folder = try TemporaryDirectory()
        try await writeRecords(folder.path)
        try checkpoint(folder.path)
        try overwrite(page: try middleLeafPage(folder.path), of: folder.path)
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        var failures = 0
        for index in 0..<400 {
            do { _ = try await store.document(try DocumentPath("records/r\(index)")) } catch { failures += 1 }
        }
        XCTAssertGreaterThan(failures, 0, "the damaged page's documents cannot be read")
        XCTAssertTrue(store.integrity.isDamaged, "\(store.integrity)")
    }

    func testASoundStoreIsVerifiedInTheBackground() async throws {
        let folder = try TemporaryDirectory()
        try await writeRecords(folder.path, count: 50)
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let found = await store.verifyIntegrity()
        guard case .verified = found else { return XCTFail("\(found)") }
        var changes = StoreChanges()
        changes.documents = [DocumentWrite(path: try DocumentPath("records/new"), body: Array("{}".utf8), retain: true, device: nil)]
        try await store.commit(changes)
    }

    /// The pages the last checkpoint wrote into the file are compared with the copies the WAL
    /// still holds: the same after a clean stop, and a page the disk lost is refused at open.
    func testAPageTheLastCheckpointWroteAndTheDiskLostIsFoundAtOpen() async throws {
        let folder = try TemporaryDirectory()
        let path = folder.file(GyroStore.fileName)
        do {
            let store = try GyroStore.open(directory: folder.path, logger: testLogger())
            var changes = StoreChanges()
            for index in 0..<300 {
                changes.documents.append(DocumentWrite(path: try DocumentPath("records/r\(index)"), body: Array(repeating: 66, count: 3000),
                                                       retain: true, device: nil))
            }
            try await store.commit(changes)
            // Checkpointed whole, then one small commit: the WAL starts again from its beginning,
            // and past that commit's frames it still holds the checkpointed ones.
            try await store.writeWithoutTransaction { db in try db.execute("PRAGMA wal_checkpoint(PASSIVE)") }
            changes.documents = [DocumentWrite(path: try DocumentPath("records/after"), body: Array("{}".utf8), retain: true, device: nil)]
            try await store.commit(changes)
        }
        guard case .consistent(let pages) = CheckpointCheck.verify(databasePath: path) else {
            return XCTFail("\(CheckpointCheck.verify(databasePath: path))")
        }
        XCTAssertGreaterThan(pages.count, 100, "the last checkpoint's pages are compared")
        do {
            let store = try GyroStore.open(directory: folder.path, logger: testLogger())
            XCTAssertEqual(store.quarantined, [], "a clean stop leaves a store that matches its checkpoint")
            let ids = try await store.documentIds(inCollection: "records")
            XCTAssertEqual(ids.count, 301)
        }

        // The disk lost one of those writes: the page still holds zeros, as before it was written.
        try overwrite(page: pages[pages.count / 2], of: folder.path, with: 0)
        guard case .damaged(let page, _) = CheckpointCheck.verify(databasePath: path) else {
            return XCTFail("\(CheckpointCheck.verify(databasePath: path))")
        }
        XCTAssertEqual(page, pages[pages.count / 2])
        let reopened = try GyroStore.open(directory: folder.path, logger: testLogger())
        XCTAssertFalse(reopened.quarantined.isEmpty, "the damaged file is moved aside")
        let ids = try await reopened.documentIds(inCollection: "records")
        XCTAssertEqual(ids, [])
    }

    /// A clean stop leaves the WAL at the start of its next cycle: the next start's recovery
    /// finds a frame or two to copy, not the last cycle's hundreds, and the open's check
    /// compares the whole cycle before with the file.
    func testACleanStopStartsTheWALsNextCycle() async throws {
        func run(_ folder: TemporaryDirectory, endingCleanly: Bool) async throws -> GyroStore.CleanStop? {
            let store = try GyroStore.open(directory: folder.path, logger: testLogger())
            var changes = StoreChanges()
            for index in 0..<300 {
                changes.documents.append(DocumentWrite(path: try DocumentPath("records/r\(index)"), body: Array(repeating: 67, count: 3000),
                                                       retain: true, device: nil))
            }
            try await store.commit(changes)
            return endingCleanly ? try await store.endRun() : nil
        }
        /// The frames the next start's recovery takes as not yet in the file.
        func framesToCopyAtOpen(_ folder: TemporaryDirectory) throws -> Int {
            let connection = try SQLiteConnection(path: folder.file(GyroStore.fileName))
            return try connection.first("PRAGMA wal_checkpoint(PASSIVE)") { try $0.int(1) } ?? -1
        }
        let before = try TemporaryDirectory()
        _ = try await run(before, endingCleanly: false)
        let copiedAgain = try framesToCopyAtOpen(before)
        XCTAssertGreaterThan(copiedAgain, 300, "without it, the start copies the last cycle again")

        let after = try TemporaryDirectory()
        let stop = try await run(after, endingCleanly: true)
        XCTAssertEqual(stop?.nextCycleStarted, true, "\(String(describing: stop))")
        XCTAssertGreaterThan(stop?.cycleFrames ?? 0, 300)
        guard case .consistent(let pages) = CheckpointCheck.verify(databasePath: after.file(GyroStore.fileName)) else {
            return XCTFail("\(CheckpointCheck.verify(databasePath: after.file(GyroStore.fileName)))")
        }
        XCTAssertGreaterThan(pages.count, 300, "the cycle before the stop's commit is compared with the file")
        let copied = try framesToCopyAtOpen(after)
        print("StoreIntegrityTests: the next start copies \(copied) frames after a clean stop, \(copiedAgain) without; \(pages.count) pages compared")
        XCTAssertLessThanOrEqual(copied, 4, "frames the next start copies (\(copiedAgain) without the clean stop)")
        let reopened = try GyroStore.open(directory: after.path, logger: testLogger())
        XCTAssertEqual(reopened.quarantined, [])
        let ids = try await reopened.documentIds(inCollection: "records")
        XCTAssertEqual(ids.count, 300)
        let stops = try await reopened.counter("store.cleanStops")
        XCTAssertEqual(stops, 1)
    }

    /// Copies of a store's files taken between commits, as a crash or a power cut leaves them,
    /// across many checkpoints and restarts of the WAL: none is taken for damaged.
    func testCopiesTakenWhileTheWALCyclesAreNeverTakenForDamaged() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        var compared = 0
        for round in 0..<24 {
            var changes = StoreChanges()
            for index in 0..<120 {
                // Rewritten documents and new ones: pages change in place and the file grows.
                changes.documents.append(DocumentWrite(path: try DocumentPath("records/r\((round * 37 + index) % 500)"),
                                                       body: Array(repeating: UInt8(round), count: 2000 + index * 7), retain: true, device: nil))
            }
            try await store.commit(changes)
            guard round % 3 == 2 else { continue }
            let copy = folder.file("copy-\(round)")
            try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
            for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: folder.file(GyroStore.fileName + suffix)) {
                try FileManager.default.copyItem(atPath: folder.file(GyroStore.fileName + suffix), toPath: copy + "/" + GyroStore.fileName + suffix)
            }
            let verdict = CheckpointCheck.verify(databasePath: copy + "/" + GyroStore.fileName)
            if case .damaged = verdict { XCTFail("round \(round): \(verdict)") }
            if case .consistent(let pages) = verdict { compared += pages.count }
            let reopened = try GyroStore.open(directory: copy, logger: testLogger())
            XCTAssertEqual(reopened.quarantined, [], "round \(round)")
        }
        XCTAssertGreaterThan(compared, 0, "some copies held a previous cycle's frames to compare")
    }

    /// What the start reads beside the checks (the open sessions, the open chunks, the sample
    /// ring's owners) and retention's oldest-first walk go through indexes of the few rows they
    /// want, not every session and chunk the store ever held (migration v7).
    func testTheStartsReadsAndRetentionsWalkUseTheirPartialIndexes() async throws {
        let folder = try TemporaryDirectory()
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let plans: [(String, [any SQLiteBindable & Sendable], String)] = [
            ("SELECT id FROM chunk WHERE isOpen = 1", [], "chunk_open"),
            ("SELECT \(SessionRecord.columns) FROM session WHERE isOpen = 1 ORDER BY startMs", [], "session_open"),
            ("SELECT \(ChunkRecord.columns) FROM chunk WHERE sessionId = ? AND isOpen = 1 ORDER BY stream, seq", ["s"], "chunk_open"),
            ("""
             SELECT c.id FROM chunk c WHERE c.isOpen = 0 AND c.pruned = 0 AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.documentPath = 'realtime_data/' || c.id)
             ORDER BY c.endMs LIMIT ?
             """, [1], "chunk_unpruned_by_end"),
        ]
        for (sql, arguments, index) in plans {
            let plan = try await store.queryPlan(sql, arguments: arguments)
            XCTAssertTrue(plan.contains { $0.contains(index) }, "\(sql): \(plan)")
        }
    }

    /// The open's check of a store without damage costs reads of its edges and the WAL, not of
    /// its size: a file ten times larger is checked in about the same time.
    func testTheOpenCheckDoesNotGrowWithTheFile() async throws {
        func openSeconds(records: Int) async throws -> (Double, Int) {
            let folder = try TemporaryDirectory()
            try await writeRecords(folder.path, count: records)
            try checkpoint(folder.path)
            let connection = try SQLiteConnection(path: folder.file(GyroStore.fileName))
            try GyroStore.prepare(connection)
            let started = ContinuousClock.now
            for _ in 0..<5 { try StoreOpenCheck.verify(connection) }
            let pages = try connection.first("PRAGMA page_count") { try $0.int(0) } ?? 0
            return ((ContinuousClock.now - started).seconds / 5, pages)
        }
        let (small, smallPages) = try await openSeconds(records: 300)
        let (large, largePages) = try await openSeconds(records: 3000)
        XCTAssertGreaterThan(largePages, 6 * smallPages)
        XCTAssertLessThan(large, max(4 * small, 0.02), "open check: \(small) s for \(smallPages) pages, \(large) s for \(largePages)")
    }
}

extension Duration {
    fileprivate var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
