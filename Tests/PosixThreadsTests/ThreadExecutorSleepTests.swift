import Foundation
import PosixThreads
import XCTest

/// `ThreadExecutor.sleep(for:)`: the executor's alarm ends the sleep, on its thread for a task
/// that prefers it; a cancellation ends it at once with `CancellationError`.
final class ThreadExecutorSleepTests: XCTestCase {
    private static let executor = try! ThreadExecutor(name: "sleep-test")

    private func elapsed(since start: ContinuousClock.Instant) -> Double {
        let took = ContinuousClock.now - start
        return Double(took.components.seconds) + Double(took.components.attoseconds) * 1e-18
    }

    func testASleepEndsAtItsDeadlineOnTheExecutorsThread() async throws {
        let executor = Self.executor
        let start = ContinuousClock.now
        let thread = try await withTaskExecutorPreference(executor) {
            try await executor.sleep(for: .milliseconds(50))
            return ThreadName.current
        }
        XCTAssertGreaterThanOrEqual(elapsed(since: start), 0.05)
        XCTAssertLessThan(elapsed(since: start), 5)
        XCTAssertEqual(thread, "sleep-test", "the alarm resumes a task that prefers the executor on its thread")
    }

    func testACancelledSleepThrowsAtOnce() async {
        let executor = Self.executor
        let start = ContinuousClock.now
        let sleeper = Task { () -> Bool in
            do {
                try await executor.sleep(for: .seconds(60))
                return false
            } catch {
                return true
            }
        }
        try? await Task.sleep(for: .milliseconds(20))
        sleeper.cancel()
        let threw = await sleeper.value
        XCTAssertTrue(threw, "a cancellation ends the sleep with CancellationError")
        XCTAssertLessThan(elapsed(since: start), 10)
    }

    func testASleepOfATaskAlreadyCancelledThrows() async {
        let executor = Self.executor
        let sleeper = Task { () -> Bool in
            withUnsafeCurrentTask { $0?.cancel() }
            do {
                try await executor.sleep(for: .seconds(60))
                return false
            } catch {
                return true
            }
        }
        let threw = await sleeper.value
        XCTAssertTrue(threw)
    }

    func testAZeroSleepEnds() async throws {
        try await Self.executor.sleep(for: .zero)
    }
}

/// The calling thread's name, as the kernel keeps it (15 bytes at most).
private enum ThreadName {
    static var current: String {
        guard let file = fopen("/proc/thread-self/comm", "r") else { return "" }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 32)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return "" }
        return String(cString: buffer).trimmingCharacters(in: .newlines)
    }
}
