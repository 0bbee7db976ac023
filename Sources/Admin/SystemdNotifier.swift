#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Sends sd_notify(3) datagrams to `$NOTIFY_SOCKET` without libsystemd: one `AF_UNIX`
/// `SOCK_DGRAM` datagram per message (`READY=1`, `STATUS=...`, `WATCHDOG=1`, `STOPPING=1`).
///
/// Without `$NOTIFY_SOCKET` (not started by systemd) every send is a no-op. An abstract
/// socket name (leading `@`) is supported, as systemd uses it in containers.
public struct SystemdNotifier: Sendable {
    public let socketPath: String?
    /// Half of `$WATCHDOG_USEC`, when systemd asked for keep-alives (and `$WATCHDOG_PID`, if
    /// set, names this process).
    public let watchdogInterval: Duration?

    public init(environment: [String: String]) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        var interval: Duration?
        if let text = environment["WATCHDOG_USEC"], let usec = Int64(text), usec > 0 {
            let forUs = environment["WATCHDOG_PID"].flatMap(Int32.init).map { $0 == getpid() } ?? true
            if forUs { interval = .microseconds(usec / 2) }
        }
        watchdogInterval = interval
    }

    public var isEnabled: Bool { socketPath != nil }

    /// Sends one datagram; returns false if it could not be sent (logged by the caller).
    @discardableResult
    public func send(_ message: String) -> Bool {
        guard let socketPath else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(socketPath.utf8)
        let abstract = bytes.first == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let payload = Array(message.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { target in
                // Never wait: a receiver whose queue is full (a stalled service manager) would
                // otherwise block this thread, a cooperative one, and the watchdog loop with it.
                payload.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT), target, length) }
            }
        }
        return sent == payload.count
    }
}
