import CSQLite
import Foundation
@testable import GyroStore
import TestSupport
import XCTest

/// The store's SQLite wrapper: errors an operator can place, bad input refused without a trap,
/// statements prepared once, transactions undone when their body fails.
final class SQLiteWrapperTests: XCTestCase {
    func makeConnection() throws -> SQLiteConnection {
        let db = try SQLiteConnection(path: ":memory:")
        try db.execute("CREATE TABLE item (id TEXT PRIMARY KEY NOT NULL, size INTEGER)")
        return db
    }

    func testAnErrorCarriesTheExtendedCodeTheMessageAndTheSQL() throws {
        let db = try makeConnection()
        try db.run("INSERT INTO item VALUES (?, ?)", ["a", 1])
        XCTAssertThrowsError(try db.run("INSERT INTO item VALUES (?, ?)", ["a", 2])) { error in
            let failure = error as? SQLiteError
            XCTAssertEqual(failure?.code, SQLITE_CONSTRAINT | 6 << 8, "SQLITE_CONSTRAINT_PRIMARYKEY, not only SQLITE_CONSTRAINT")
            XCTAssertTrue(failure?.message.contains("UNIQUE constraint failed: item.id") == true, "\(error)")
            XCTAssertTrue("\(error)".contains("INSERT INTO item VALUES (?, ?)"), "\(error)")
        }
    }

    func testBadArgumentsAndColumnsAreErrorsNotTraps() throws {
        let db = try makeConnection()
        XCTAssertThrowsError(try db.run("INSERT INTO item VALUES (?, ?)", ["a"])) { error in
            XCTAssertEqual((error as? SQLiteError)?.primaryCode, SQLITE_RANGE, "\(error)")
        }
        try db.run("INSERT INTO item VALUES (?, ?)", ["a", nil as Int?])
        XCTAssertThrowsError(try db.first("SELECT size FROM item") { try $0.int(0) }) { error in
            XCTAssertEqual((error as? SQLiteError)?.primaryCode, SQLITE_MISMATCH, "\(error)")
            XCTAssertTrue("\(error)".contains("column size is NULL"), "\(error)")
        }
        XCTAssertThrowsError(try db.first("SELECT id FROM item") { try $0.text(1) }) { error in
            XCTAssertEqual((error as? SQLiteError)?.primaryCode, SQLITE_RANGE, "\(error)")
        }
        XCTAssertEqual(try db.first("SELECT size FROM item") { try $0.optionalInt64(0) }, .some(nil))
    }

    func testStatementsArePreparedOncePerSQL() throws {
        let db = try makeConnection()
        let sql = "INSERT INTO item VALUES (?, ?)"
        let first = try db.statement(sql)
        try first.execute(["a", 1])
        XCTAssertTrue(try db.statement(sql) === first)
        // One still being stepped is not handed out again.
        let select = try db.statement("SELECT id FROM item")
        try select.forEachRow { _ in
            XCTAssertFalse(try db.statement("SELECT id FROM item") === select)
            return true
        }
        XCTAssertTrue(try db.statement("SELECT id FROM item") === select)
    }

    func testATransactionIsRolledBackWhenItsBodyThrows() throws {
        let db = try makeConnection()
        struct Refused: Error {}
        XCTAssertThrowsError(try db.transaction {
            try db.run("INSERT INTO item VALUES (?, ?)", ["a", 1])
            throw Refused()
        })
        XCTAssertFalse(db.isInTransaction)
        XCTAssertEqual(try db.first("SELECT COUNT(*) FROM item") { try $0.int(0) }, 0)
        try db.transaction { try db.run("INSERT INTO item VALUES (?, ?)", ["b", 2]) }
        XCTAssertEqual(try db.all("SELECT id FROM item") { try $0.text(0) }, ["b"])
    }

    /// The publisher's outbox pass can wait seconds inside its read for the broker; meanwhile other
    /// reads are answered by other readers and commits go on (WAL).
    func testReadsAndCommitsGoOnWhileAnOutboxPassWaits() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let store = try GyroStore.open(directory: folder.path, logger: testLogger())
        let path = try DocumentPath("records/a")
        var changes = StoreChanges()
        changes.documents = [DocumentWrite(path: path, body: Array("{}".utf8), retain: true, device: nil)]
        try await store.commit(changes)

        let (entered, enteredContinuation) = AsyncStream.makeStream(of: Void.self)
        let gate = DispatchSemaphore(value: 0)
        let pass = Task {
            try await store.deliverOutbox(after: 0, limit: 10) { _ in
                enteredContinuation.yield()
                return gate.wait(timeout: .now() + 10) == .success
            }
        }
        for await _ in entered { break }
        let body = try await store.document(path)
        XCTAssertEqual(body, Array("{}".utf8))
        changes.documents = [DocumentWrite(path: try DocumentPath("records/b"), body: Array("{}".utf8), retain: true, device: nil)]
        try await store.commit(changes)
        let ids = try await store.documentIds(inCollection: "records")
        XCTAssertEqual(ids, ["a", "b"])
        gate.signal()
        let result = try await pass.value
        XCTAssertEqual(result.delivered, 1, "the pass read its snapshot, from before records/b")
    }
}
