import HCI
import Synchronization

/// Whether one link is up, and who waits for it to go down. Shared by the host's dispatch
/// (which marks it down synchronously, in event order) and the ``LEConnection`` actor.
final class LinkState: Sendable {
    private struct State {
        var reason: HCIStatus?
        var waiters: [CheckedContinuation<HCIStatus, Never>] = []
    }

    private let state = Mutex(State())

    var isConnected: Bool { state.withLock { $0.reason == nil } }
    var reason: HCIStatus? { state.withLock { $0.reason } }

    /// Marks the link down and wakes every waiter; later calls keep the first reason.
    func markDown(_ reason: HCIStatus) {
        let waiters = state.withLock { state -> [CheckedContinuation<HCIStatus, Never>] in
            guard state.reason == nil else { return [] }
            state.reason = reason
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: reason) }
    }

    func waitUntilDown() async -> HCIStatus {
        await withCheckedContinuation { continuation in
            let reason = state.withLock { state -> HCIStatus? in
                if let reason = state.reason { return reason }
                state.waiters.append(continuation)
                return nil
            }
            if let reason { continuation.resume(returning: reason) }
        }
    }
}
