import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The lines a child process writes to a pipe, read on a thread of their own as they come, for a
/// test to wait on ("running", "READY …", a log line) instead of sleeping and looking.
public final class OutputLines: @unchecked Sendable {
    public struct State: Sendable {
        public var lines: [String] = []
        /// The writing end closed (every writer exited).
        public var ended = false
    }

    public let state = Watched(State())

    /// Reads `descriptor` (which it owns and closes at end of file); with `copyTo`, appends what
    /// it reads to that file too, so that a log file still holds everything.
    public init(reading descriptor: Int32, copyTo path: String? = nil) {
        var copy: FileHandle?
        if let path {
            if !FileManager.default.fileExists(atPath: path) { FileManager.default.createFile(atPath: path, contents: nil) }
            copy = FileHandle(forWritingAtPath: path)
        }
        copy?.seekToEndOfFile()
        let state = self.state
        let output = copy
        let thread = Thread {
            var pending: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                output?.write(Data(buffer[0..<count]))
                pending += buffer[0..<count]
                var complete: [String] = []
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    complete.append(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
                if !complete.isEmpty { state.update { $0.lines += complete } }
            }
            close(descriptor)
            try? output?.close()
            state.update { state in
                if !pending.isEmpty { state.lines.append(String(decoding: pending, as: UTF8.self)) }
                state.ended = true
            }
        }
        thread.name = "test-output"
        thread.start()
    }

    public var lines: [String] { state.value.lines }
    public var text: String { lines.joined(separator: "\n") }

    /// Waits for a line `matching` (counting from line `after`); returns it, or nil when the
    /// output ended or `timeout` seconds passed first.
    public func wait(timeout: Double, after: Int = 0, for matching: @escaping (String) -> Bool) async -> String? {
        _ = await state.wait(timeout: timeout) { $0.ended || $0.lines.dropFirst(after).contains(where: matching) }
        return state.value.lines.dropFirst(after).first(where: matching)
    }

    /// ``wait(timeout:after:for:)`` that blocks its thread.
    public func waitBlocking(timeout: Double, after: Int = 0, for matching: (String) -> Bool) -> String? {
        _ = state.waitBlocking(timeout: timeout) { $0.ended || $0.lines.dropFirst(after).contains(where: matching) }
        return state.value.lines.dropFirst(after).first(where: matching)
    }

    /// A pipe whose reading end this reads: pass `writer` to a child, then close it here.
    public static func pipe(copyTo path: String? = nil) throws -> (lines: OutputLines, writer: Int32) {
        var fds: [Int32] = [-1, -1]
        guard Glibc.pipe(&fds) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (OutputLines(reading: fds[0], copyTo: path), fds[1])
    }
}

/// A datagram socket bound where a child's `NOTIFY_SOCKET` points, as systemd binds one: the
/// child's sd_notify messages (`READY=1`, `STATUS=…`, `STOPPING=1`) arrive as events.
public final class NotifySocket: @unchecked Sendable {
    public let path: String
    public let messages = Watched<[String]>([])
    private let fd: Int32

    public init(path: String) throws {
        self.path = path
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw POSIXError(.ENAMETOOLONG) }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            let error = errno
            close(fd)
            throw POSIXError(.init(rawValue: error) ?? .EIO)
        }
        self.fd = fd
        let messages = self.messages
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }  // shut down (deinit); sd_notify sends no empty datagrams
                let text = String(decoding: buffer[0..<count], as: UTF8.self)
                messages.update { $0.append(text) }
            }
            close(fd)
        }
        thread.name = "test-notify"
        thread.start()
    }

    /// Waits for a datagram with a line `line` (say `READY=1`); false after `timeout` seconds.
    public func wait(timeout: Double, for line: String) async -> Bool {
        await messages.wait(timeout: timeout) { $0.contains { $0.split(separator: "\n").contains(Substring(line)) } }
    }

    public func waitBlocking(timeout: Double, for line: String, orUntil stop: @escaping () -> Bool = { false }) -> Bool {
        _ = messages.waitBlocking(timeout: timeout) { messages in
            stop() || messages.contains { $0.split(separator: "\n").contains(Substring(line)) }
        }
        return messages.value.contains { $0.split(separator: "\n").contains(Substring(line)) }
    }

    /// Wakes the waiters without a message (the child exited: nothing more will come).
    public func poke() { messages.update { _ in } }

    deinit {
        shutdown(fd, Int32(SHUT_RDWR))  // ends the reading thread, which closes the descriptor
        unlink(path)
    }
}
