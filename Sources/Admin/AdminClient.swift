import FoundationEssentials
import JSON
import TextTools

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A small blocking HTTP/1.1 client over a unix socket, for the CLI and the tests: one
/// request per connection, `Connection: close`, the response read to EOF.
public struct AdminClient: Sendable {
    public struct Response: Sendable {
        public var status: Int
        public var headers: [String: String]
        public var body: [UInt8]

        public var text: String { String(decoding: body, as: UTF8.self) }
        /// The body as JSON; an error says what is wrong with it.
        public func json() throws(JSONError) -> JSONValue { try JSONValue(parsing: body) }
        /// The body's JSON object, or an empty one when the body is not a JSON object (a
        /// caller that must tell the difference uses `json()`).
        public var object: [String: JSONValue] { (try? json())?.object ?? [:] }
    }

    public enum Failure: Error, CustomStringConvertible, Sendable {
        /// Nobody listens: ENOENT (no socket) or ECONNREFUSED (stale socket).
        case notRunning(path: String, reason: String)
        /// EACCES/EPERM on the socket.
        case notPermitted(path: String, reason: String)
        case io(String)
        case malformedResponse(String)

        public var description: String {
            switch self {
            case .notRunning(let path, let reason): "gyrogate is not running (nothing answers on \(path): \(reason))"
            case .notPermitted(let path, let reason): "not permitted to use the admin socket \(path) (\(reason)); ask for the socket's group or use sudo"
            case .io(let message): "admin socket: \(message)"
            case .malformedResponse(let message): "admin socket: malformed response (\(message))"
            }
        }
    }

    public let socketPath: String
    /// Receive timeout per read; the server's own request timeout is 10 s.
    public var timeoutSeconds: Int

    public init(socketPath: String, timeoutSeconds: Int = 30) {
        self.socketPath = socketPath
        self.timeoutSeconds = timeoutSeconds
    }

    public func request(_ method: String, _ target: String, json body: JSONValue? = nil) throws(Failure) -> Response {
        let bytes = body?.encoded(.compact) ?? []
        var head = "\(method) \(target) HTTP/1.1\r\nHost: gyrogate\r\nConnection: close\r\nContent-Length: \(bytes.count)\r\n"
        if body != nil { head += "Content-Type: application/json\r\n" }
        head += "\r\n"
        return try parse(try exchange(Array(head.utf8) + bytes))
    }

    /// Connects, writes `raw` as is, and reads until the server closes (used by the CLI and by
    /// hostile-input tests).
    public func exchange(_ raw: [UInt8], shutdownWrite: Bool = false) throws(Failure) -> [UInt8] {
        let fd = try connect()
        defer { close(fd) }
        var offset = 0
        while offset < raw.count {
            let written = raw[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                // The server may answer early (413, 431) and close while we still write.
                if errno == EPIPE || errno == ECONNRESET { break }
                throw .io("write: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
        if shutdownWrite { shutdown(fd, Int32(SHUT_WR)) }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { received += chunk[0..<count]; continue }
            if count == 0 { break }
            if errno == EINTR { continue }
            if errno == ECONNRESET && !received.isEmpty { break }
            throw .io("read: \(String(cString: strerror(errno)))")
        }
        return received
    }

    public func connect() throws(Failure) -> Int32 {
        switch UnixSocket.connect(path: socketPath) {
        case .success(let fd):
            var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            return fd
        case .failure(let failure):
            switch failure.code {
            case ENOENT, ECONNREFUSED, ENOTDIR: throw .notRunning(path: socketPath, reason: String(cString: strerror(failure.code)))
            case EACCES, EPERM: throw .notPermitted(path: socketPath, reason: String(cString: strerror(failure.code)))
            default: throw .io(failure.description)
            }
        }
    }

    /// Parses a `Connection: close` response: status line, headers, and the body (to
    /// `Content-Length`, or to EOF).
    public func parse(_ raw: [UInt8]) throws(Failure) -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = raw.indices.first(where: { raw[$0...].starts(with: separator) }) else {
            throw .malformedResponse(raw.isEmpty ? "the connection closed without a response" : "no end of head")
        }
        let headLines = String(decoding: raw[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = headLines[0].split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/1."), let status = Int(statusParts[1]) else {
            throw .malformedResponse("status line \"\(headLines[0].prefix(80))\"")
        }
        var headers: [String: String] = [:]
        for line in headLines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmed()
        }
        if (100..<200).contains(status) && status != 101 { return try parse(Array(raw[(end + 4)...])) }  // interim response
        var body = Array(raw[(end + 4)...])
        if let length = headers["content-length"].flatMap(Int.init), length <= body.count { body = Array(body[..<length]) }
        return Response(status: status, headers: headers, body: body)
    }
}
