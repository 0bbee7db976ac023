import Glibc
import Logging
import PosixThreads

/// H4 over TCP, with `TCP_NODELAY` so small commands are not held back by Nagle's algorithm.
enum TCPConnector {
    static func open(host: String, port: UInt16, spec: String, loop: ThreadExecutor, logger: Logger) throws(TransportError) -> any HCITransport {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let text = String(cString: gai_strerror(status))
            throw TransportError(kind: .systemCall, transport: spec, operation: "getaddrinfo",
                                 hint: "cannot resolve \(host): \(text)")
        }
        defer { freeaddrinfo(list) }
        var lastError: Int32 = 0
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            let descriptor = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue),
                                    info.pointee.ai_protocol)
            guard descriptor >= 0 else { lastError = errno; continue }
            if connect(descriptor, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 {
                var one: Int32 = 1
                setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                logger.info("H4/TCP transport connected", metadata: ["subsystem": "ble", "transport": "\(spec)"])
                return FileDescriptorTransport(descriptor: descriptor, name: spec, loop: loop, logger: logger)
            }
            lastError = errno
            close(descriptor)
        }
        throw TransportError(kind: .systemCall, transport: spec, operation: "connect", errorNumber: lastError,
                             hint: lastError == ECONNREFUSED ? "nothing listens on \(host):\(port); is the controller or emulator running?" : nil)
    }
}
