import JSON
import TextTools

/// One parsed request, as the router sees it: no NIO types, so routing is tested without I/O.
public struct AdminRequest: Sendable {
    public var method: String
    /// The percent-encoded path, without the query.
    public var path: String
    public var query: [String: String]
    public var body: [UInt8]
    public var peer: PeerCredentials?

    public init(method: String, target: String, body: [UInt8] = [], peer: PeerCredentials? = nil) {
        self.method = method
        self.body = body
        self.peer = peer
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            query = Self.parseQuery(target[target.index(after: mark)...])
        } else {
            path = target
            query = [:]
        }
    }

    static func parseQuery(_ text: Substring) -> [String: String] {
        var items: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = PercentEncoding.decode(parts[0].replacingEvery("+", with: " ")) ?? String(parts[0])
            let value = parts.count > 1 ? (PercentEncoding.decode(parts[1].replacingEvery("+", with: " ")) ?? "") : ""
            items[name] = value
        }
        return items
    }

    /// Mutating requests may be restricted to some uids and groups.
    public var isMutating: Bool { method != "GET" && method != "HEAD" }
}

/// One response: a status, a content type and the bytes of the body, or, for a body too large
/// to hold (an export), the stream that writes it.
public struct AdminResponse: Sendable, Equatable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    /// Headers beside the content type and length (`content-disposition` of a download).
    public var headers: [String: String] = [:]
    /// Writes the body in parts, sent as they come (chunked), in place of `body`.
    public var stream: AdminBodyStream?

    public init(status: Int, contentType: String = "application/json", body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }

    /// A JSON response, keys sorted so that the same answer is the same bytes.
    public static func json(_ status: Int = 200, _ value: JSONValue) -> AdminResponse {
        AdminResponse(status: status, body: value.encoded(.sortedKeys) + [0x0A])
    }

    /// The error shape of every failure: `{"error":{"code":"...","message":"..."}}`.
    public static func error(_ status: Int, _ code: String, _ message: String) -> AdminResponse {
        json(status, ["error": ["code": .string(code), "message": .string(message)]])
    }
}

/// Errors a handler throws to answer with a status; anything else becomes a 500.
struct AdminError: Error {
    var status: Int
    var code: String
    var message: String

    init(_ status: Int, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    static func badRequest(_ message: String) -> AdminError { AdminError(400, "bad_request", message) }
    static func notFound(_ message: String) -> AdminError { AdminError(404, "not_found", message) }
}

/// Where a streamed body's parts go: the HTTP response, a part per write. Errors are the
/// export's own, which name what went wrong (`ExportError`); kept as `any Error` here so that
/// these messages need nothing of the Export module.
public protocol AdminBodyOutput: Sendable {
    func write(_ bytes: [UInt8]) async throws
}

/// A response body written in parts as it is made: an export of a 4-hour session is hundreds of
/// megabytes, which the response must not hold. `produce` writes to the output it is given;
/// each part is sent (and flushed) before the next is made, so a slow client slows the export
/// instead of filling memory.
public struct AdminBodyStream: Sendable, Equatable {
    /// Names the stream in logs and comparisons (`export demo-user___1718625600 csv`).
    public let label: String
    public let produce: @Sendable (any AdminBodyOutput) async throws -> Void

    public init(label: String, produce: @escaping @Sendable (any AdminBodyOutput) async throws -> Void) {
        self.label = label
        self.produce = produce
    }

    public static func == (lhs: AdminBodyStream, rhs: AdminBodyStream) -> Bool { lhs.label == rhs.label }
}
