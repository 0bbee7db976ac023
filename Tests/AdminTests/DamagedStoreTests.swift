import Foundation
@testable import GyroStore
import JSON
import TestSupport
import XCTest

/// A store damaged where the bounded open does not read is found by the background check of
/// the running gateway, which stops with the fix in its log; its next start moves the file
/// aside and says so in the status (docs/durability.md, "Corruption").
final class DamagedStoreTests: XCTestCase {
    func testTheGatewayStopsOnADamagedStoreAndItsNextStartMovesItAside() async throws {
        let directory = try TemporaryDirectory("gyrogate-admin")
        let data = directory.file("data")
        do {
            let store = try GyroStore.open(directory: data, logger: testLogger())
            var changes = StoreChanges()
            for index in 0..<400 {
                changes.documents.append(DocumentWrite(path: try DocumentPath("records/r\(index)"), body: Array(repeating: 65, count: 3000),
                                                       retain: true, device: nil))
            }
            try await store.commit(changes)
        }
        let path = data + "/" + GyroStore.fileName
        let page: Int
        do {
            let connection = try SQLiteConnection(path: path)
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            let leaves: [Int]
            do {
                leaves = try connection.all("SELECT pageno FROM dbstat WHERE name = 'document' AND pagetype = 'leaf' ORDER BY path") { try $0.int(0) }
            } catch {
                throw XCTSkip("this SQLite has no dbstat table: \(error)")
            }
            page = leaves[leaves.count / 2]
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64((page - 1) * 1024))
        handle.write(Data(repeating: 0xA5, count: 1024))
        try handle.close()

        // The open reads the trees' edges only: the gateway starts, then its background check stops it.
        let damaged = try DaemonProcess(directory: directory, waitUntilReady: false)
        let status = damaged.waitForExit(timeout: 60)
        XCTAssertEqual(status, 1, damaged.log())
        XCTAssertTrue(damaged.log().contains("the store file is damaged"), damaged.log())
        XCTAssertTrue(damaged.log().contains("moves the file aside"), "the log names the fix: \(damaged.log())")
        XCTAssertTrue(FileManager.default.fileExists(atPath: path + ".damaged"))

        let restarted = try DaemonProcess(directory: directory)
        defer { restarted.stop() }
        let response = try restarted.client.request("GET", "/v1/status")
        let store = try XCTUnwrap(try JSONValue.object(parsing: response.body)["store"])
        XCTAssertEqual(store["state"]?.string, "ok")
        let moved = store["movedAsideAtStart"]?.array?.compactMap(\.string) ?? []
        XCTAssertTrue(moved.contains { $0.hasSuffix(".damaged") }, "\(moved)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + ".damaged"))
    }
}
