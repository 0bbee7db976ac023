import Foundation

/// Polls `condition` until it holds or `timeout` seconds pass: for state that announces no
/// change (an actor's status, a child's control socket, a row count in the store). Where the
/// code under test produces an event (a message, a line, an exit, a callback), wait on that
/// with ``Watched`` or ``Latch`` instead.
public func eventually(timeout: Double, _ condition: @escaping @Sendable () async throws -> Bool) async rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try await condition() { return true }
        // why: the state polled here has no change notification; 20 ms between looks, not a wait for time.
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}
