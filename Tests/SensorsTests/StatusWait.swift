import Foundation
import Sensors
import XCTest

/// Looks at `probe` until it yields a value or `timeout` seconds pass. For state that announces
/// no change: the supervisor's status (an actor's), the emulated board's control socket, the
/// daemon's admin status. Every wait of the sensor tests on such state goes through here.
func poll<T>(timeout: Double, _ probe: () async throws -> T?) async throws -> T? {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if let value = try await probe() { return value }
        guard Date() < deadline else { return nil }
        // why: the state polled has no change notification; a look every 20 ms, not a wait for time.
        try await Task.sleep(for: .milliseconds(20))
    }
}

/// Waits until `condition` holds for the supervisor's status: what a test waits for (a reconnect,
/// a state, samples after an event), however long it takes on a loaded machine, up to `timeout`
/// seconds. Returns that status.
@discardableResult
func waitForStatus(_ supervisor: SensorSupervisor, _ what: String, timeout: Double = 30, file: StaticString = #filePath,
                   line: UInt = #line, _ condition: (SensorStatus) -> Bool) async throws -> SensorStatus {
    var last = await supervisor.status()
    let met = try await poll(timeout: timeout) { () async -> SensorStatus? in
        last = await supervisor.status()
        return condition(last) ? last : nil
    }
    if met == nil { XCTFail("waited \(timeout) s for \(what); status: \(last)", file: file, line: line) }
    return last
}

/// Waits until `condition` holds (the emulated board's status, say), up to `timeout` seconds.
func waitFor(_ what: String, timeout: Double = 30, file: StaticString = #filePath, line: UInt = #line,
             _ condition: () async throws -> Bool) async throws {
    let met = try await poll(timeout: timeout) { try await condition() ? true : nil }
    if met == nil { XCTFail("waited \(timeout) s for \(what)", file: file, line: line) }
}
