import Foundation
import TestSupport
import XCTest

/// A test notify socket (AF_UNIX SOCK_DGRAM in the temp dir) stands in for systemd.
final class NotifySocket {
    let fd: Int32
    let path: String

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        guard bound == 0 else { throw XCTSkip("cannot bind a datagram socket at \(path)") }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Every datagram that arrives within `seconds`.
    func collect(for seconds: TimeInterval) -> [String] {
        var messages: [String] = []
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { messages.append(String(decoding: buffer[0..<count], as: UTF8.self)) }
        }
        return messages
    }

    deinit { close(fd) }
}

final class WatchdogTests: XCTestCase {
    func testReadyStatusAndKeepAlivesWhichStopWhenThePipelineStalls() throws {
        let directory = try TemporaryDirectory("gyrogate-admin")
        let notify = try NotifySocket(path: directory.file("notify.sock"))
        let stallFile = directory.file("stall")
        // WatchdogSec=0.4 s: keep-alives every 0.2 s.
        let daemon = try DaemonProcess(environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "400000",
                                                     "GYROGATE_TEST_STALL_FILE": stallFile], directory: directory)
        defer { daemon.stop() }

        let first = notify.collect(for: 1.5)
        XCTAssertTrue(first.contains { $0.split(separator: "\n").contains("READY=1") }, "\(first)")
        XCTAssertTrue(first.contains { $0.hasPrefix("STATUS=") }, "\(first)")
        XCTAssertGreaterThanOrEqual(first.filter { $0 == "WATCHDOG=1" }.count, 3, "\(first)")

        // An open session with no data is idle by design, not stalled.
        XCTAssertEqual(try daemon.client.request("POST", "/v1/sessions", json: ["device": "C4:BE:84:00:00:01"]).status, 201)
        XCTAssertGreaterThanOrEqual(notify.collect(for: 1).filter { $0 == "WATCHDOG=1" }.count, 2)

        // Stalled: keep-alives stop, STATUS says why.
        _ = FileManager.default.createFile(atPath: stallFile, contents: nil)
        // A check that began before the file appeared may still send one keep-alive.
        _ = notify.collect(for: 0.6)
        let stalled = notify.collect(for: 1.2)
        XCTAssertEqual(stalled.filter { $0 == "WATCHDOG=1" }.count, 0, "\(stalled)")
        XCTAssertTrue(stalled.contains { $0.hasPrefix("STATUS=stalled") }, "\(stalled)")

        // Progressing again: keep-alives resume.
        try FileManager.default.removeItem(atPath: stallFile)
        XCTAssertGreaterThanOrEqual(notify.collect(for: 1.2).filter { $0 == "WATCHDOG=1" }.count, 2)

        daemon.stop()
        XCTAssertTrue(notify.collect(for: 0.3).contains("STOPPING=1"))
    }

    func testWithoutWatchdogUsecOnlyReadinessAndStatusAreSent() throws {
        let directory = try TemporaryDirectory("gyrogate-admin")
        let notify = try NotifySocket(path: directory.file("notify.sock"))
        let daemon = try DaemonProcess(environment: ["NOTIFY_SOCKET": notify.path], directory: directory)
        defer { daemon.stop() }
        let messages = notify.collect(for: 1)
        XCTAssertTrue(messages.contains { $0.hasPrefix("READY=1") }, "\(messages)")
        XCTAssertFalse(messages.contains("WATCHDOG=1"), "\(messages)")
    }
}
