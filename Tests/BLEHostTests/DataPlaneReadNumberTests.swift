import BLEHost
import Glibc
import XCTest
import PosixThreads

/// `ThreadExecutor.currentRead`: what lets a receiver read the clock once per read of the
/// transport. It is the same for everything one read delivers, another for the next read, and
/// 0 outside a read (a job, a timer), where a receiver reads the clock itself.
final class DataPlaneReadNumberTests: XCTestCase {
    func testEachReadHasItsOwnNumberAndNothingElseHasOne() async throws {
        let loop = try! ThreadExecutor(name: "test-loop")
        let pipe = TestPipe()
        let (reads, reading) = AsyncStream.makeStream(of: (UInt64, UInt64).self)
        let id = loop.register(pipe.readEnd) {
            let before = loop.currentRead
            if pipe.receive() > 0 { reading.yield((before, loop.currentRead)) }
        }
        defer { loop.unregister(id) }
        var iterator = reads.makeAsyncIterator()
        var numbers: [UInt64] = []
        for _ in 0..<2 {
            pipe.send()
            let next = await iterator.next()
            let (before, after) = try XCTUnwrap(next)
            XCTAssertNotEqual(before, 0, "a handler runs inside a numbered read")
            XCTAssertEqual(before, after, "one read keeps its number while its handler runs")
            numbers.append(before)
        }
        XCTAssertNotEqual(numbers[0], numbers[1], "the next read has another number")
        let outside = await withCheckedContinuation { continuation in
            loop.execute { continuation.resume(returning: loop.currentRead) }
        }
        XCTAssertEqual(outside, 0, "a job runs outside any read")
    }
}
