import HCI
import Synchronization

/// Whether one link is up, and who waits for it to go down. Shared by the host's dispatch
/// (which marks it down synchronously, in event order) and the ``LEConnection`` actor.
final class LinkState: Sendable {
    private struct State {
        var end: LinkEnd?
        var waiters: [CheckedContinuation<LinkEnd, Never>] = []
    }

    private let state = Mutex(State())

    var isConnected: Bool { state.withLock { $0.end == nil } }
    var reason: HCIStatus? { state.withLock { $0.end?.status } }

    /// Marks the link down and wakes every waiter; later calls keep the first reason.
    func markDown(_ reason: LinkEnd) {
        let waiters = state.withLock { state -> [CheckedContinuation<LinkEnd, Never>] in
            guard state.end == nil else { return [] }
            state.end = reason
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: reason) }
    }

    func waitUntilDown() async -> LinkEnd {
        await withCheckedContinuation { continuation in
            let reason = state.withLock { state -> LinkEnd? in
                if let reason = state.end { return reason }
                state.waiters.append(continuation)
                return nil
            }
            if let reason { continuation.resume(returning: reason) }
        }
    }
}
