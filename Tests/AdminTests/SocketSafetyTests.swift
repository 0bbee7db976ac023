import Admin
import Foundation
import TestSupport
import XCTest

/// The socket's mode and group, stale sockets replaced, live ones never stolen, and what the
/// CLI says when the daemon is absent or the socket is not permitted.
final class SocketSafetyTests: XCTestCase {
    func mode(_ path: String) -> (mode: Int, gid: UInt32)? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return (Int(info.st_mode & 0o777), info.st_gid)
    }

    func testTheSocketGetsTheConfiguredModeAndGroupAndIsRemovedOnShutdown() throws {
        let daemon = try DaemonProcess(admin: ["mode": "0600"])
        XCTAssertEqual(mode(daemon.socketPath)?.mode, 0o600)
        daemon.stop()
        XCTAssertEqual(daemon.process.terminationStatus, 0, daemon.log())
        XCTAssertNil(mode(daemon.socketPath), "the socket file should be removed on shutdown")

        let grouped = try DaemonProcess(admin: ["group": "daemon"])
        defer { grouped.stop() }
        XCTAssertEqual(mode(grouped.socketPath)?.mode, 0o660)
        XCTAssertEqual(mode(grouped.socketPath)?.gid, 1)
    }

    func testAnUnknownGroupStopsTheDaemonWithAClearError() throws {
        let daemon = try DaemonProcess(admin: ["group": "no-such-group-gyrogate"], waitUntilReady: false)
        XCTAssertEqual(daemon.waitForExit(), 1)
        XCTAssertTrue(daemon.log().contains("there is no group \"no-such-group-gyrogate\""), daemon.log())
    }

    func testAStaleSocketIsReplaced() throws {
        let directory = try TemporaryDirectory("gyrogate-admin")
        _ = makeSocketFile(at: directory.file("admin.sock"), listen: false)
        XCTAssertEqual(AdminSocketFile.probe(directory.file("admin.sock")), .stale)
        let daemon = try DaemonProcess(directory: directory)
        defer { daemon.stop() }
        XCTAssertEqual(try daemon.client.request("GET", "/v1/status").status, 200)
    }

    func testALiveSocketIsNotStolen() throws {
        let directory = try TemporaryDirectory("gyrogate-admin")
        let listener = makeSocketFile(at: directory.file("admin.sock"), listen: true)
        defer { close(listener) }
        XCTAssertEqual(AdminSocketFile.probe(directory.file("admin.sock")), .live)
        let daemon = try DaemonProcess(directory: directory, waitUntilReady: false)
        XCTAssertEqual(daemon.waitForExit(), 1)
        XCTAssertTrue(daemon.log().contains("is in use"), daemon.log())
        XCTAssertEqual(AdminSocketFile.probe(directory.file("admin.sock")), .live, "the other listener's socket must stay")
    }

    func testASecondDaemonOnTheSameSocketFailsWithoutTouchingTheFirstOnesSessions() throws {
        let first = try DaemonProcess()
        defer { first.stop() }
        let started = try first.client.request("POST", "/v1/sessions", json: ["device": "C4:BE:84:00:00:01"])
        let id = try XCTUnwrap(started.object["id"]?.string)
        let second = try DaemonProcess(directory: first.directory, waitUntilReady: false)
        XCTAssertEqual(second.waitForExit(), 1)
        XCTAssertEqual(try first.client.request("GET", "/v1/sessions/\(id)").object["open"]?.bool, true)
    }

    func testANonSocketFileIsNeverReplaced() throws {
        let directory = try TemporaryDirectory("gyrogate-admin")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: directory.file("admin.sock")))
        let daemon = try DaemonProcess(directory: directory, waitUntilReady: false)
        XCTAssertEqual(daemon.waitForExit(), 1)
        XCTAssertEqual(try String(contentsOfFile: directory.file("admin.sock"), encoding: .utf8), "precious")
    }

    func testTheCLISaysWhenTheDaemonIsNotRunning() throws {
        let directory = try TemporaryDirectory("gyrogate-admin")
        let missing = try runCLI(["status", "--socket", directory.file("admin.sock")])
        XCTAssertEqual(missing.status, 69)
        XCTAssertTrue(missing.stderr.contains("gyrogate is not running"), missing.stderr)
        _ = makeSocketFile(at: directory.file("admin.sock"), listen: false)
        let stale = try runCLI(["sessions", "--range", "week", "--socket", directory.file("admin.sock")])
        XCTAssertEqual(stale.status, 69)
    }

    func testTheCLISaysWhenTheSocketIsNotPermitted() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            throw XCTSkip("needs root and setpriv to run the CLI as another user")
        }
        let daemon = try DaemonProcess(admin: ["mode": "0600"])
        defer { daemon.stop() }
        // The temp dir and the binary must be reachable by nobody for the test to mean anything.
        chmod(daemon.directory.path, 0o755)
        let asNobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        let denied = try runCLI(["status", "--socket", daemon.socketPath], prefix: asNobody)
        guard !denied.stderr.contains("Permission denied") || denied.stderr.contains("admin socket") else {
            throw XCTSkip("nobody cannot run the built binary here: \(denied.stderr)")
        }
        XCTAssertEqual(denied.status, 77, denied.stderr)
        XCTAssertTrue(denied.stderr.contains("not permitted to use the admin socket"), denied.stderr)
    }
}
