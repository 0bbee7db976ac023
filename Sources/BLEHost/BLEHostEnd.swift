import Synchronization

/// Why a ``BLEHost`` ended: it was stopped, or its controller went away under it.
public enum BLEHostEnd: Sendable, Equatable, CustomStringConvertible {
    /// ``BLEHost/stop()`` was called.
    case stopped
    /// The transport failed or closed after the host started: a USB dongle unplugged, an
    /// emulator killed, a UART error. Every link is down; the host cannot be used again, a new
    /// transport and host are needed.
    case transportLost(TransportError)

    public var description: String {
        switch self {
        case .stopped: "the host was stopped"
        case let .transportLost(error): "\(error)"
        }
    }
}

/// The host's end, told once to everyone waiting for it. Shared by the host's reader and writer
/// (which report a lost transport from wherever they notice it) and ``BLEHost/waitUntilEnded()``;
/// a waiter that is cancelled leaves at once, so a service can wait for it next to other work.
final class HostEndSignal: Sendable {
    private struct State {
        var end: BLEHostEnd?
        var waiters: [UInt64: CheckedContinuation<BLEHostEnd, any Error>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Records the end and wakes every waiter; later calls keep the first end.
    func finish(_ end: BLEHostEnd) {
        let waiters = state.withLock { state -> [CheckedContinuation<BLEHostEnd, any Error>] in
            guard state.end == nil else { return [] }
            state.end = end
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: end) }
    }

    /// - throws: `CancellationError` when the waiting task is cancelled first.
    func wait() async throws -> BLEHostEnd {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                // Under the lock: a cancellation handler that already ran found nothing to
                // resume, so the flag is checked here instead.
                let ready = state.withLock { state -> Result<BLEHostEnd, any Error>? in
                    if let end = state.end { return .success(end) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }
}
