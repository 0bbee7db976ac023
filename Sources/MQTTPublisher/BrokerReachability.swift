import GatewayConfig
import Glibc
import PosixThreads

/// Whether a broker accepts TCP connections: how a gateway on a fallback broker learns that an
/// earlier one is back, without an MQTT session that would take our client id over there.
enum BrokerReachability {
    /// On a thread of its own: the index of the first of `brokers` that accepts a TCP connection
    /// within `timeoutMs` (each), or nil; `done` gets it.
    static func firstReachable(_ brokers: [BrokerEndpoint], timeoutMs: Int32, _ done: @escaping @Sendable (Int?) -> Void) {
        let started = DetachedThread.start(name: "mqtt-failback") {
            done(brokers.firstIndex { accepts($0, timeoutMs: timeoutMs) })
        }
        if !started { done(nil) }
    }

    /// A non-blocking connect to every address `broker.host` resolves to, each given `timeoutMs`.
    static func accepts(_ broker: BrokerEndpoint, timeoutMs: Int32) -> Bool {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(broker.host, String(broker.port), &hints, &list) == 0, let first = list else { return false }
        defer { freeaddrinfo(first) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            if connects(address.pointee, timeoutMs: timeoutMs) { return true }
            entry = address.pointee.ai_next
        }
        return false
    }

    private static func connects(_ address: addrinfo, timeoutMs: Int32) -> Bool {
        let fd = socket(address.ai_family, address.ai_socktype | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), address.ai_protocol)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        if connect(fd, address.ai_addr, address.ai_addrlen) == 0 { return true }
        guard errno == EINPROGRESS else { return false }
        var waiting = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&waiting, 1, timeoutMs) == 1 else { return false }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else { return false }
        return error == 0
    }
}
