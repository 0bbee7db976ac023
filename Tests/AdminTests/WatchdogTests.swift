import Foundation
import TestSupport
import XCTest

/// The daemon's notify socket (``DaemonProcess/notify``) stands in for systemd; every check of
/// the watchdog sends a STATUS, so its messages are the clock these tests count by.
extension NotifySocket {
    var all: [String] { messages.value }

    /// Waits until `condition` holds for the messages from index `from` on.
    func wait(_ what: String, from: Int = 0, timeout: Double = 15, file: StaticString = #filePath, line: UInt = #line,
              until condition: @escaping (ArraySlice<String>) -> Bool) async {
        let held = await messages.wait(timeout: timeout) { condition($0.dropFirst(from)) }
        if !held { XCTFail("waited \(timeout) s for \(what): \(all.dropFirst(from))", file: file, line: line) }
    }
}

final class WatchdogTests: XCTestCase {
    func testReadyStatusAndKeepAlivesWhichStopWhenThePipelineStalls() async throws {
        let directory = try TemporaryDirectory("gyrogate-admin")
        let stallFile = directory.file("stall")
        // WatchdogSec=0.4 s: keep-alives every 0.2 s.
        let daemon = try DaemonProcess(environment: ["WATCHDOG_USEC": "400000", "GYROGATE_TEST_STALL_FILE": stallFile], directory: directory)
        defer { daemon.stop() }
        let notify = daemon.notify
        func keepAlives(_ messages: ArraySlice<String>) -> Int { messages.filter { $0 == "WATCHDOG=1" }.count }

        await notify.wait("READY=1, a STATUS and 3 keep-alives") { messages in
            messages.contains { $0.split(separator: "\n").contains("READY=1") } && messages.contains { $0.hasPrefix("STATUS=") }
                && keepAlives(messages) >= 3
        }

        // An open session with no data is idle by design, not stalled.
        XCTAssertEqual(try daemon.client.request("POST", "/v1/sessions", json: ["device": "C4:BE:84:00:00:01"]).status, 201)
        await notify.wait("2 keep-alives with a session open", from: notify.all.count) { keepAlives($0) >= 2 }

        // Stalled: keep-alives stop, STATUS says why, check after check.
        _ = FileManager.default.createFile(atPath: stallFile, contents: nil)
        let beforeStall = notify.all.count
        await notify.wait("4 stalled checks", from: beforeStall) { $0.filter { $0.hasPrefix("STATUS=stalled") }.count >= 4 }
        let stalledFrom = try XCTUnwrap(notify.all.indices.dropFirst(beforeStall).first { notify.all[$0].hasPrefix("STATUS=stalled") })
        let stalled = notify.all[stalledFrom...]
        XCTAssertEqual(keepAlives(stalled), 0, "no keep-alive from the first stalled check on: \(stalled)")

        // Progressing again: keep-alives resume.
        try FileManager.default.removeItem(atPath: stallFile)
        await notify.wait("keep-alives again", from: notify.all.count) { keepAlives($0) >= 2 }

        let beforeStop = notify.all.count
        daemon.stop()
        await notify.wait("STOPPING=1", from: beforeStop) { $0.contains("STOPPING=1") }
    }

    func testWithoutWatchdogUsecOnlyReadinessAndStatusAreSent() async throws {
        let daemon = try DaemonProcess()
        defer { daemon.stop() }
        // The first check runs at start and sends its STATUS: by then a keep-alive would have come too.
        await daemon.notify.wait("READY=1 and a check's STATUS") { messages in
            messages.contains { $0.hasPrefix("READY=1") } && messages.contains { $0.hasPrefix("STATUS=") && !$0.hasPrefix("STATUS=capturing; admin socket") }
        }
        XCTAssertFalse(daemon.notify.all.contains("WATCHDOG=1"), "\(daemon.notify.all)")
    }
}
