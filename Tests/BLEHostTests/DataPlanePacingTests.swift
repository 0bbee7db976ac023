import BLEHost
import Glibc
import Synchronization
import XCTest
import PosixThreads
import SupportCore

/// Paced reads: while a board-time stream allows it and nothing holds the loop to prompt reads,
/// a descriptor is read at most once per interval, so one read takes what arrived meanwhile.
final class DataPlanePacingTests: XCTestCase {
    func testReadsAreBatchedWhilePacedAndPromptWhileHeld() async throws {
        let loop = try! ThreadExecutor(name: "test-loop")
        let pipe = TestPipe()
        struct Counts: Sendable { var reads = 0, bytes = 0 }
        let counts = Watched(Counts())
        let id = loop.register(pipe.readEnd) {
            let n = pipe.receive()
            if n > 0 { counts.update { $0.reads += 1; $0.bytes += n } }
        }
        defer { loop.unregister(id) }
        func send(_ count: Int) async throws {
            for _ in 0..<count {
                pipe.send()
                // why: bytes spaced 20 ms apart are the input under test (batched while paced, one read each while held).
                try await Task.sleep(for: .milliseconds(20))
            }
        }

        loop.setReadInterval(seconds: 0.5)
        XCTAssertEqual(loop.readInterval, 0, "without a board-time stream, reads are prompt")
        let allowance = loop.allowPacedReads()
        XCTAssertEqual(loop.readInterval, 0.5)
        try await send(11)  // ~220 ms: the first is read at once, the rest wait for the interval
        _ = await counts.wait(timeout: 10) { $0.bytes >= 11 }
        let paced = counts.value
        XCTAssertEqual(paced.bytes, 11, "everything is read")
        XCTAssertLessThanOrEqual(paced.reads, 3, "one read per interval, not one per byte")

        let hold = loop.holdPromptReads()
        XCTAssertEqual(loop.readInterval, 0, "a hold (a request in flight) makes reads prompt")
        try await send(10)
        _ = await counts.wait(timeout: 10) { $0.bytes >= 21 }
        let prompt = counts.value
        XCTAssertEqual(prompt.bytes, 21)
        XCTAssertGreaterThanOrEqual(prompt.reads - paced.reads, 5, "bytes 20 ms apart are read as they come")
        hold.release()
        XCTAssertEqual(loop.readInterval, 0.5, "the hold's end paces reads again")
        allowance.release()
        XCTAssertEqual(loop.readInterval, 0)
    }

    /// A prompt-read hold taken while the thread waits out a long interval ends the wait: the
    /// byte that came meanwhile is read at once, not when the interval ends.
    func testAHoldWakesAThreadWaitingOutAnInterval() async throws {
        let loop = try! ThreadExecutor(name: "test-loop")
        let pipe = TestPipe()
        let bytes = Watched(0)
        let id = loop.register(pipe.readEnd) {
            let n = pipe.receive()
            if n > 0 { bytes.update { $0 += n } }
        }
        defer { loop.unregister(id) }
        loop.setReadInterval(seconds: 10)
        let allowance = loop.allowPacedReads()
        // The first byte is read at once and starts an interval; the second waits in the pipe.
        pipe.send()
        let first = await bytes.wait(timeout: 5) { $0 >= 1 }
        XCTAssertTrue(first)
        pipe.send()
        let hold = loop.holdPromptReads()
        let second = await bytes.wait(timeout: 5) { $0 >= 2 }
        XCTAssertTrue(second, "read well before the 10 s interval ends")
        hold.release()
        allowance.release()
    }

    /// A non-blocking descriptor is read when a paced interval ends, without a poll first: its
    /// handler runs at the end of every interval, also when nothing is there.
    func testANonblockingDescriptorIsReadAtTheEndOfEachIntervalWithoutData() async throws {
        let loop = try! ThreadExecutor(name: "test-loop")
        let pipe = TestPipe()
        let (calls, calling) = AsyncStream.makeStream(of: Int.self)
        let id = loop.register(pipe.readEnd) { calling.yield(pipe.receive()) }
        defer { loop.unregister(id) }
        loop.setReadInterval(seconds: 0.02)
        let allowance = loop.allowPacedReads()
        // A read starts the first interval (an idle loop waits for the descriptor in poll).
        pipe.send()
        var empty = 0
        for await count in calls where count < 0 {
            empty += 1
            if empty == 3 { break }
        }
        XCTAssertEqual(empty, 3, "an interval's end reads the descriptor though nothing was written")
        allowance.release()
    }

    /// A blocking descriptor is read only when poll finds it readable, paced or not: a read
    /// there would block the loop.
    func testABlockingDescriptorIsReadOnlyWhenReadable() async throws {
        let loop = try! ThreadExecutor(name: "test-loop")
        let pipe = TestPipe(nonblocking: false)
        let (reads, reading) = AsyncStream.makeStream(of: Bool.self)
        let id = loop.register(pipe.readEnd) {
            var probe = pollfd(fd: pipe.readEnd, events: Int16(POLLIN), revents: 0)
            let readable = poll(&probe, 1, 0) == 1
            if readable { _ = pipe.receive() }
            reading.yield(readable)
        }
        defer { loop.unregister(id) }
        loop.setReadInterval(seconds: 0.02)
        let allowance = loop.allowPacedReads()
        var iterator = reads.makeAsyncIterator()
        for _ in 0..<3 {
            pipe.send()
            let readable = await iterator.next()
            XCTAssertEqual(readable, true, "the handler runs only when there is something to read")
        }
        allowance.release()
    }
}
