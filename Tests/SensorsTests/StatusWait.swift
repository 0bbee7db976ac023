import Foundation
import Sensors
import XCTest

/// Waits until `condition` holds for the supervisor's status: what a test waits for (a reconnect,
/// a state, samples after an event), however long it takes on a loaded machine, up to `timeout`
/// seconds. Returns that status.
@discardableResult
func waitForStatus(_ supervisor: SensorSupervisor, _ what: String, timeout: Double = 30, file: StaticString = #filePath,
                   line: UInt = #line, _ condition: (SensorStatus) -> Bool) async throws -> SensorStatus {
    let deadline = Date().addingTimeInterval(timeout)
    var status = await supervisor.status()
    while !condition(status) {
        guard Date() < deadline else {
            XCTFail("waited \(timeout) s for \(what); status: \(status)", file: file, line: line)
            return status
        }
        try await Task.sleep(for: .milliseconds(20))  // a look at the status, not a wait for time
        status = await supervisor.status()
    }
    return status
}

/// Waits until `condition` holds (the emulated board's status, say), up to `timeout` seconds.
func waitFor(_ what: String, timeout: Double = 30, file: StaticString = #filePath, line: UInt = #line,
             _ condition: () async throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try await !condition() {
        guard Date() < deadline else {
            XCTFail("waited \(timeout) s for \(what)", file: file, line: line)
            return
        }
        try await Task.sleep(for: .milliseconds(20))  // a look at the condition, not a wait for time
    }
}
