import CHCISocket
import Glibc
import HCI
import Logging
import Synchronization

/// An ``HCITransport`` over one file descriptor: the HCI user channel socket, a TCP socket
/// carrying H4, or a serial device carrying H4.
///
/// Why plain POSIX and not swift-nio: all three transports are one descriptor each, and two of
/// them (the Bluetooth socket and the tty) are not sockets NIO bootstraps. One reader thread per
/// descriptor, blocked in `poll`, feeding an `AsyncThrowingStream` is the same code for all
/// three, costs one thread per controller (there is one), and keeps packet order trivially.
/// Writes are short blocking `write`s from the caller (a few hundred bytes at most per packet).
///
/// The reader frames bytes with ``H4Framer`` in every case: the user channel delivers one H4
/// packet per `read`, a stream delivers arbitrary slices; both frame the same way.
///
/// Lifetime: ``close()`` refuses further writes, shuts a socket down (so the other end sees the
/// link go, e.g. the emulator drops its links) and wakes the reader through a pipe; the
/// descriptor itself is closed in `deinit`, after the reader thread has been joined, so a write
/// racing with `close()` never lands on a reused descriptor number.
final class FileDescriptorTransport: HCITransport {
    private struct State {
        var descriptor: Int32
        var closed = false
        var stream: AsyncThrowingStream<H4Packet, any Error>?
        var reader: pthread_t?
    }

    private let state: Mutex<State>
    private let name: String
    private let logger: Logger
    /// The reader thread wakes on a byte written here when ``close()`` is called.
    private let wakePipe: (read: Int32, write: Int32)

    init(descriptor: Int32, name: String, logger: Logger) throws(TransportError) {
        var fds: [Int32] = [0, 0]
        guard chci_pipe(&fds) == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw TransportError(kind: .systemCall, transport: name, operation: "pipe2", errorNumber: code)
        }
        wakePipe = (fds[0], fds[1])
        self.name = name
        self.logger = logger
        let (stream, continuation) = AsyncThrowingStream<H4Packet, any Error>.makeStream()
        state = Mutex(State(descriptor: descriptor, stream: stream))
        let reader = startReader(descriptor: descriptor, continuation: continuation)
        state.withLock { $0.reader = reader }
    }

    deinit {
        let (descriptor, reader, closed) = state.withLock { ($0.descriptor, $0.reader, $0.closed) }
        if !closed {
            var byte: UInt8 = 1
            _ = Glibc.write(wakePipe.write, &byte, 1)
        }
        if let reader { pthread_join(reader, nil) }
        Glibc.close(descriptor)
        Glibc.close(wakePipe.read)
        Glibc.close(wakePipe.write)
    }

    func send(_ packet: H4Packet) async throws {
        let bytes = packet.h4Bytes
        let descriptor = try state.withLock { state throws(TransportError) -> Int32 in
            guard !state.closed else {
                throw TransportError(kind: .closed, transport: name, operation: "write", hint: "the transport is closed")
            }
            return state.descriptor
        }
        // Returns errno on failure (typed throws inside this closure crashes the 6.3 compiler).
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

    func packets() -> AsyncThrowingStream<H4Packet, any Error> {
        state.withLock { state in
            if let stream = state.stream {
                state.stream = nil
                return stream
            }
            // A second caller gets a stream that ends at once: programmer error, but not a trap.
            return AsyncThrowingStream { $0.finish() }
        }
    }

    func close() async {
        let descriptor = state.withLock { state -> Int32? in
            guard !state.closed else { return nil }
            state.closed = true
            return state.descriptor
        }
        guard let descriptor else { return }
        _ = shutdown(descriptor, Int32(SHUT_RDWR)) // ENOTSOCK for a tty: harmless
        var byte: UInt8 = 1
        _ = Glibc.write(wakePipe.write, &byte, 1)
    }

    /// Starts the reader thread; it holds no reference to `self`, only the descriptors.
    private func startReader(descriptor: Int32,
                             continuation: AsyncThrowingStream<H4Packet, any Error>.Continuation) -> pthread_t? {
        let name = self.name
        let wake = wakePipe
        let logger = self.logger
        let thread = ReaderThread {
            var framer = H4Framer()
            var buffer = [UInt8](repeating: 0, count: 65536)
            var failure: (any Error)?
            loop: while true {
                var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
                let ready = poll(&fds, 2, -1)
                if ready < 0 {
                    if errno == EINTR { continue }
                    failure = TransportError(kind: .systemCall, transport: name, operation: "poll", errorNumber: errno)
                    break
                }
                if fds[1].revents != 0 { break }
                if fds[0].revents == 0 { continue }
                let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
                if count < 0 {
                    let code = errno
                    if code == EINTR || code == EAGAIN { continue }
                    failure = TransportError(kind: .systemCall, transport: name, operation: "read", errorNumber: code)
                    break
                }
                if count == 0 {
                    failure = TransportError(kind: .closed, transport: name, operation: "read",
                                             hint: "the controller closed the connection")
                    break
                }
                let before = framer.discardedByteCount
                framer.append(buffer[0..<count])
                while let packet = framer.nextPacket() {
                    // A fresh array per packet: holding slices of the framer's buffer would make
                    // its next append copy the whole buffer.
                    let copy = H4Packet(type: packet.type, bytes: Array(packet.bytes)[...])
                    if case .terminated = continuation.yield(copy) { break loop }
                }
                if framer.discardedByteCount != before {
                    logger.warning("H4 stream lost sync; bytes skipped",
                                   metadata: ["subsystem": "ble", "transport": "\(name)",
                                              "skipped": "\(framer.discardedByteCount - before)"])
                }
            }
            continuation.finish(throwing: failure)
        }
        guard let started = thread.start() else {
            continuation.finish(throwing: TransportError(kind: .systemCall, transport: name, operation: "pthread_create",
                                                         hint: "could not start the reader thread"))
            return nil
        }
        return started
    }
}

/// A joinable POSIX thread running one closure (the transport's blocking reader).
private final class ReaderThread: Sendable {
    private let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }

    /// The joinable thread, or nil when none could be created (then the reader fails at once).
    func start() -> pthread_t? {
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            let reader = Unmanaged<ReaderThread>.fromOpaque(argument!).takeRetainedValue()
            reader.body()
            return nil
        }, box.toOpaque())
        guard result == 0 else {
            box.release()
            return nil
        }
        return thread
    }
}
