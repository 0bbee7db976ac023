#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value behind a pthread mutex.
///
/// Why not `Synchronization.Mutex`: on Linux it is a futex driven from uninstrumented library
/// code, so ThreadSanitizer (which CI runs over the store's and the publisher's tests) cannot
/// see it order the accesses it guards, and reports them as races. A pthread mutex it sees.
public final class LockedState<State>: @unchecked Sendable {
    /// Unchecked Sendable: `state` is only reached through `withLock`.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var state: State

    public init(_ state: State) {
        self.state = state
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
