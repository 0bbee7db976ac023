import Foundation
import PosixThreads
import SupportCore
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
        let started = Latch()
        let sleeper = Task { () -> Bool in
            do {
                // On the executor's thread: the latch opens in the same job that sets the timer.
                try await withTaskExecutorPreference(executor) {
                    started.open()
                    try await executor.sleep(for: .seconds(60))
                }
                return false
            } catch {
                return true
            }
        }
        await executor.sleepBegun(after: started)
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

    /// A zero sleep returns (does not throw) at once, also on the executor's thread.
    func testAZeroSleepEnds() async throws {
        let executor = Self.executor
        let start = ContinuousClock.now
        var threw: (any Error)?
        do { try await executor.sleep(for: .zero) } catch { threw = error }
        XCTAssertNil(threw, "a zero sleep of a task not cancelled ends without an error")
        let thread = try await withTaskExecutorPreference(executor) {
            try await executor.sleep(for: .zero)
            return ThreadName.current
        }
        XCTAssertEqual(thread, "sleep-test", "the alarm resumes a task that prefers the executor on its thread")
        XCTAssertLessThan(elapsed(since: start), 5, "a zero sleep is no wait")
        // The executor still runs timers after it: a later sleep ends at its deadline.
        let later = ContinuousClock.now
        try await executor.sleep(for: .milliseconds(10))
        XCTAssertGreaterThanOrEqual(elapsed(since: later), 0.01)
    }
}

extension ThreadExecutor {
    /// Returns once a task that opened `started` on this executor's thread, in the job that then
    /// calls `sleep(for:)`, has set its timer: waits for the latch, then for a job of its own,
    /// which this thread runs only after that one.
    func sleepBegun(after started: Latch) async {
        _ = await started.wait(timeout: 30)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            execute { continuation.resume() }
        }
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
