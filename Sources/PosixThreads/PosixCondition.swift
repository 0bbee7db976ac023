#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A pthread mutex with its condition variable, for state shared with C callbacks on other
/// threads. Not the standard library's `Mutex`: on Linux that one is built on futexes that
/// ThreadSanitizer cannot see, and TSan then reports every access under it as a race.
/// Deadlines are on the monotonic clock, so setting the wall clock does not stretch a wait.
public final class PosixCondition: @unchecked Sendable {
    /// When a wait gives up, on `CLOCK_MONOTONIC`.
    public struct Deadline: Sendable {
        fileprivate var time: timespec

        public static func after(_ duration: Duration) -> Deadline {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let (seconds, attoseconds) = duration.components
            var nanoseconds = Int64(now.tv_nsec) + attoseconds / 1_000_000_000
            let (sum, overflow) = Int64(now.tv_sec).addingReportingOverflow(seconds)
            var total = overflow ? (seconds > 0 ? Int64.max / 2 : 0) : sum
            total += nanoseconds / 1_000_000_000
            nanoseconds %= 1_000_000_000
            if nanoseconds < 0 {
                nanoseconds += 1_000_000_000
                total -= 1
            }
            return Deadline(time: timespec(tv_sec: Int(total), tv_nsec: Int(nanoseconds)))
        }
    }

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        mutex = .allocate(capacity: 1)
        condition = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Wakes every thread waiting; call it holding the lock.
    public func broadcast() { pthread_cond_broadcast(condition) }

    /// Waits, holding the lock, for a `broadcast` (or a spurious wake-up: callers re-check
    /// their condition).
    public func wait() { pthread_cond_wait(condition, mutex) }

    /// Waits, holding the lock, for a `broadcast` (or a spurious wake-up: callers re-check
    /// their condition); false once `deadline` has passed.
    public func wait(until deadline: Deadline) -> Bool {
        var time = deadline.time
        return pthread_cond_timedwait(condition, mutex, &time) != ETIMEDOUT
    }
}
