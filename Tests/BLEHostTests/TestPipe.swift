import Glibc

/// A pipe whose read end a loop's test registers: bytes written to it make the descriptor
/// readable, as a controller's packets make a transport's.
final class TestPipe: Sendable {
    let readEnd: Int32
    let writeEnd: Int32

    init(nonblocking: Bool = true) {
        var fds: [Int32] = [-1, -1]
        precondition(pipe(&fds) == 0, "pipe: errno \(errno)")
        (readEnd, writeEnd) = (fds[0], fds[1])
        if nonblocking { _ = fcntl(readEnd, F_SETFL, O_NONBLOCK) }
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Writes one byte.
    func send() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Reads what is there: the number of bytes, or -1 when nothing is (a non-blocking pipe).
    func receive() -> Int {
        var buffer = [UInt8](repeating: 0, count: 64)
        return read(readEnd, &buffer, buffer.count)
    }
}
