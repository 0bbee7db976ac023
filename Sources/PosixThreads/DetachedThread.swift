#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A POSIX thread of its own for one closure, for work that blocks (a C library's network
/// loop, the data plane's poll) and must not hold a thread of Swift's cooperative pool.
public enum DetachedThread {
    private final class Start {
        let name: String?
        let body: @Sendable () -> Void
        init(name: String?, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts `body` on a new detached thread; false when the system refuses one (EAGAIN).
    /// - parameter name: shown by `top -H` and in core dumps; Linux keeps the first 15 bytes.
    /// - parameter body: what the thread runs; the thread ends when it returns.
    @discardableResult
    public static func start(name: String? = nil, _ body: @escaping @Sendable () -> Void) -> Bool {
        let start = Unmanaged.passRetained(Start(name: name, body: body))
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            DetachedThread.run(argument)
            return nil
        }, start.toOpaque())
        guard result == 0 else {
            start.release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    private static func run(_ argument: UnsafeMutableRawPointer?) {
        guard let argument else { return }
        let start = Unmanaged<Start>.fromOpaque(argument).takeRetainedValue()
        if let name = start.name { nameCurrentThread(name) }
        start.body()
    }

    /// What `pthread_setname_np` does (Glibc's module does not export it): the kernel keeps
    /// the name in the thread's `comm`, at most 15 bytes. A failure only loses the name.
    /// Without a name a thread inherits its creator's (a dispatch worker's, say), and per-thread
    /// figures (`top -H`, `/proc/PID/task`) mix it with that one.
    public static func nameCurrentThread(_ name: String) {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }
}
