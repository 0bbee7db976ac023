#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension ThreadExecutor {
    /// Calls `handler` on the thread whenever `descriptor` is readable, until
    /// ``unregister(_:)``. The handler reads what is there; the descriptor stays the caller's.
    ///
    /// A descriptor that is `O_NONBLOCK` when registered is also read, without a poll, when a
    /// paced interval ends (its handler then may find nothing): a paced wake-up is then one
    /// `poll` that times out and the reads, not a second `poll` to learn what the read tells.
    public func register(_ descriptor: Int32, handler: @escaping ReadableHandler) -> UInt64 {
        let id = state.withLock { state -> UInt64 in
            state.nextRegistration += 1
            let flags = fcntl(descriptor, F_GETFL)
            state.registrations[state.nextRegistration] = Registration(descriptor: descriptor, handler: handler,
                                                                       nonblocking: flags >= 0 && flags & O_NONBLOCK != 0)
            state.generation += 1
            return state.nextRegistration
        }
        execute {}  // wakes a sleeping poll so that it includes the descriptor
        return id
    }

    /// Stops watching a descriptor. On the thread, no handler of it runs after this returns;
    /// from elsewhere, one already running may finish.
    public func unregister(_ id: UInt64) {
        state.withLock { state in
            if state.registrations.removeValue(forKey: id) != nil { state.generation += 1 }
        }
        execute {}
    }
}
