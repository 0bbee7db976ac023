import BLEHost
import Glibc
import Synchronization
import XCTest

/// Paced reads: while a board-time stream allows it and nothing holds the loop to prompt reads,
/// a descriptor is read at most once per interval, so one read takes what arrived meanwhile.
final class DataPlanePacingTests: XCTestCase {
    func testReadsAreBatchedWhilePacedAndPromptWhileHeld() async throws {
        let loop = DataPlaneLoop()
        var fds: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&fds), 0)
        let (readEnd, writeEnd) = (fds[0], fds[1])
        defer { close(readEnd); close(writeEnd) }
        _ = fcntl(readEnd, F_SETFL, O_NONBLOCK)
        let counts = Mutex((reads: 0, bytes: 0))
        let id = loop.register(readEnd) {
            var buffer = [UInt8](repeating: 0, count: 64)
            let n = read(readEnd, &buffer, buffer.count)
            if n > 0 { counts.withLock { $0 = ($0.reads + 1, $0.bytes + n) } }
        }
        defer { loop.unregister(id) }
        func send(_ count: Int) async throws {
            for _ in 0..<count {
                var byte: UInt8 = 1
                _ = write(writeEnd, &byte, 1)
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        loop.setReadInterval(seconds: 0.5)
        XCTAssertEqual(loop.readInterval, 0, "without a board-time stream, reads are prompt")
        loop.pacedStream(+1)
        XCTAssertEqual(loop.readInterval, 0.5)
        try await send(11)  // ~220 ms: the first is read at once, the rest wait for the interval
        try await Task.sleep(for: .milliseconds(800))
        let paced = counts.withLock { $0 }
        XCTAssertEqual(paced.bytes, 11, "everything is read")
        XCTAssertLessThanOrEqual(paced.reads, 3, "one read per interval, not one per byte")

        loop.promptReads(+1)
        XCTAssertEqual(loop.readInterval, 0, "a hold (a request in flight) makes reads prompt")
        try await send(10)
        try await Task.sleep(for: .milliseconds(200))
        let prompt = counts.withLock { $0 }
        XCTAssertEqual(prompt.bytes, 21)
        XCTAssertGreaterThanOrEqual(prompt.reads - paced.reads, 5, "bytes 20 ms apart are read as they come")
        loop.promptReads(-1)
        loop.pacedStream(-1)
        XCTAssertEqual(loop.readInterval, 0)
    }
}
