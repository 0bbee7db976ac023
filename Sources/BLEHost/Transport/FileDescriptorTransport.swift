import Glibc
import HCI
import Logging
import Synchronization
import PosixThreads

/// An ``HCITransport`` over one file descriptor: the HCI user channel socket, a TCP socket
/// carrying H4, or a serial device carrying H4.
///
/// Why plain POSIX and not swift-nio: all three transports are one descriptor each, and two of
/// them (the Bluetooth socket and the tty) are not sockets NIO bootstraps. The descriptor is
/// watched by the ``ThreadExecutor``: when it is readable, the loop's thread reads it, frames
/// the bytes with ``H4Framer`` (the user channel delivers one packet per `read`, a stream
/// arbitrary slices; both frame the same way) and hands the packets to the host as it frames
/// them, all those of a wake-up in one call (``HCITransport/start(receive:ended:)``).
/// A wake-up drains the descriptor (see ``Reader/readable()``), so a paced read takes every
/// packet queued since the last one on a packet socket as on a stream.
/// Writes are short blocking `write`s on the same thread (a few hundred bytes per packet).
///
/// Lifetime: ``close()`` refuses further writes, shuts a socket down (so the other end sees
/// the link go, e.g. the emulator drops its links), and the loop then stops watching the
/// descriptor and closes it, so no read or write ever lands on a reused descriptor number.
final class FileDescriptorTransport: HCITransport {
    private struct State {
        var closed = false
        var started = false
        var registration: UInt64?
    }

    let loop: ThreadExecutor
    private let descriptor: Int32
    private let state = Mutex(State())
    /// The reading side, kept for ``close()`` to end it on the loop.
    private let reader = Mutex<Reader?>(nil)
    private let name: String
    private let logger: Logger

    init(descriptor: Int32, name: String, loop: ThreadExecutor, logger: Logger) {
        // Non-blocking, so that the loop may read it when a paced interval ends without polling
        // first (a read that finds nothing returns EAGAIN); a write to a full buffer waits in `send`.
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) }
        self.descriptor = descriptor
        self.name = name
        self.loop = loop
        self.logger = logger
    }

    deinit {
        let (registration, closed) = state.withLock { ($0.registration, $0.closed) }
        let descriptor = self.descriptor
        if !closed { _ = shutdown(descriptor, Int32(SHUT_RDWR)) }
        loop.execute { [loop] in
            if let registration { loop.unregister(registration) }
            Glibc.close(descriptor)
        }
    }

    func start(receive: @escaping @Sendable (_ next: @Sendable () -> H4Packet?) -> Void, ended: @escaping @Sendable (TransportError) -> Void) {
        let reader = Reader(descriptor: descriptor, name: name, packets: Self.isPacketSocket(descriptor), logger: logger,
                            receive: receive, ended: ended)
        let closed = state.withLock { state -> Bool in
            if !state.closed, !state.started {
                state.started = true
                state.registration = loop.register(descriptor) { [loop] in
                    if let failure = reader.readable() {
                        reader.end(failure)
                        if let id = reader.registration { loop.unregister(id) }
                    }
                }
                reader.registration = state.registration
                return false
            }
            return true
        }
        if closed {
            loop.execute {
                reader.end(TransportError(kind: .closed, transport: self.name, operation: "read", hint: "the transport is closed"))
            }
        } else {
            self.reader.withLock { $0 = reader }
        }
    }

    /// Whether each `read` returns one packet (the user channel's raw socket, a seqpacket
    /// socket) rather than a slice of a byte stream (TCP, a tty: `ENOTSOCK`).
    static func isPacketSocket(_ descriptor: Int32) -> Bool {
        var type: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0 else { return false }
        return type != Int32(SOCK_STREAM.rawValue)
    }

    func send(_ packet: H4Packet) throws(TransportError) {
        if state.withLock({ $0.closed }) {
            throw TransportError(kind: .closed, transport: name, operation: "write", hint: "the transport is closed")
        }
        var bytes = [packet.type.rawValue]
        bytes.append(contentsOf: packet.bytes)
        let failure: Int32? = bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    let code = errno
                    if code == EINTR { continue }
                    if code == EAGAIN {
                        var pfd = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                        _ = poll(&pfd, 1, 100)
                        continue
                    }
                    return code
                }
                offset += written
            }
            return nil
        }
        if let failure {
            throw TransportError(kind: .systemCall, transport: name, operation: "write", errorNumber: failure)
        }
    }

    func close() {
        let registration = state.withLock { state -> UInt64?? in
            guard !state.closed else { return nil }
            state.closed = true
            return .some(state.registration)
        }
        guard let registration else { return }
        _ = shutdown(descriptor, Int32(SHUT_RDWR)) // ENOTSOCK for a tty: harmless
        let reader = self.reader.withLock { $0 }
        let name = self.name
        loop.execute { [loop] in
            if let registration { loop.unregister(registration) }
            reader?.end(TransportError(kind: .closed, transport: name, operation: "read", hint: "the transport was closed"))
        }
    }
}

/// The reading side, used only on the loop's thread: the framer, the read buffer and the
/// host's callbacks. (`@unchecked Sendable`: it is created elsewhere but touched only there.)
private final class Reader: @unchecked Sendable {
    let descriptor: Int32
    let name: String
    /// One packet per `read` (see ``FileDescriptorTransport/isPacketSocket(_:)``).
    let packets: Bool
    let logger: Logger
    /// Both released at the end: the host they hold holds the transport.
    private var receive: @Sendable (_ next: @Sendable () -> H4Packet?) -> Void
    private var ended: (@Sendable (TransportError) -> Void)?
    var registration: UInt64?
    private var framer = H4Framer()
    /// This wake-up's reads so far, why the transport ended, and whether the descriptor is drained.
    private var reads = 0
    private var failure: TransportError?
    private var drained = false
    /// The packet read to learn that the wake-up brought any, handed over first.
    private var pending: H4Packet?
    private var buffer = [UInt8](repeating: 0, count: 65536)
    private var finished = false

    init(descriptor: Int32, name: String, packets: Bool, logger: Logger, receive: @escaping @Sendable (_ next: @Sendable () -> H4Packet?) -> Void,
         ended: @escaping @Sendable (TransportError) -> Void) {
        self.descriptor = descriptor
        self.name = name
        self.packets = packets
        self.logger = logger
        self.receive = receive
        self.ended = ended
    }

    /// Reads until the descriptor would block, at most ``maxReadsPerWakeUp`` times, and delivers
    /// every whole packet, in one call of `receive`; returns why the transport ended.
    ///
    /// Why a loop: a paced loop calls this once per interval, and on a packet socket one `read`
    /// returns one packet while several boards queue hundreds per interval. A stream's `read`
    /// returns everything up to the buffer's size, so there the loop goes on only while reads
    /// fill the buffer: no extra `read` (to learn EAGAIN) per wake-up on the TCP path.
    func readable() -> TransportError? {
        guard !finished else { return nil }
        let before = framer.discardedByteCount
        (reads, failure, drained) = (0, nil, false)
        if let first = nextPacket() {
            pending = first
            receive { self.takePacket() }
        }
        if framer.discardedByteCount != before {
            logger.warning("H4 stream lost sync; bytes skipped",
                           metadata: ["subsystem": "ble", "transport": "\(name)",
                                      "skipped": "\(framer.discardedByteCount - before)"])
        }
        return failure
    }

    private func takePacket() -> H4Packet? {
        if let packet = pending {
            pending = nil
            return packet
        }
        return nextPacket()
    }

    /// The next whole packet, read from the descriptor when the framer holds none.
    private func nextPacket() -> H4Packet? {
        while true {
            if let packet = framer.nextPacket() { return packet }
            guard !drained, reads < Self.maxReadsPerWakeUp else { return nil }
            reads += 1
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 {
                let code = errno
                if code == EINTR { continue }
                if code != EAGAIN {
                    failure = TransportError(kind: .systemCall, transport: name, operation: "read", errorNumber: code)
                }
                drained = true
                return nil
            }
            if count == 0 {
                failure = TransportError(kind: .closed, transport: name, operation: "read", hint: "the controller closed the connection")
                drained = true
                return nil
            }
            buffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            if !packets, count < buffer.count { drained = true }
        }
    }

    /// The bound on one wake-up's reads, so that a flooding controller cannot starve the loop's
    /// timers and jobs: above what 8 boards at 400 Hz queue in a 500 ms paced interval (one
    /// packet per read); what is left is read at the next wake-up.
    static let maxReadsPerWakeUp = 2048

    func end(_ error: TransportError) {
        guard !finished, let ended else { return }
        finished = true
        receive = { _ in }
        self.ended = nil
        ended(error)
    }
}
