import Capture
import Export
import FoundationEssentials
import GatewayConfig
import GyroStore
import JSON
import Logging

/// The admin API's routes and handlers, over plain request and response values.
///
/// Paths are versioned (`/v1/...`) except `/metrics`, where Prometheus looks. Every failure is
/// `{"error":{"code":"...","message":"..."}}` with a 4xx or 5xx status. Handlers only call the
/// capture engine's public session API and read the store, so a bad request cannot disturb
/// capture beyond what that API allows.
public struct AdminAPI: Sendable {
    public let configuration: GatewayConfiguration
    public let store: GyroStore
    public let engine: CaptureEngine
    public let calendar: PeriodCalendar
    public let providers: AdminProviders
    public let version: String
    public let access: AdminAccessPolicy
    let started = ContinuousClock.now
    let coalescer = ResponseCoalescer()
    /// Whether concurrent status and metrics reads share one computation (on by default; the
    /// benchmark turns it off to measure the difference).
    public var coalescesReads = true
    let startedAtMs = Date().timeIntervalSince1970 * 1000

    public init(configuration: GatewayConfiguration, store: GyroStore, engine: CaptureEngine, providers: AdminProviders = AdminProviders(),
                version: String, access: AdminAccessPolicy) {
        self.configuration = configuration
        self.store = store
        self.engine = engine
        self.calendar = PeriodCalendar(timeZone: configuration.timeZone, firstWeekday: configuration.firstWeekday)
        self.providers = providers
        self.version = version
        self.access = access
    }

    /// Answers one request; never throws. Concurrent status and metrics reads share one
    /// computation (`ResponseCoalescer`).
    public func respond(to request: AdminRequest) async -> AdminResponse {
        if coalescesReads && request.method == "GET" && request.query.isEmpty && (request.path == "/v1/status" || request.path == "/metrics") {
            return await coalescer.response(for: request.path) { await self.answer(request) }
        }
        let response = await answer(request)
        if request.isMutating { await coalescer.invalidate() }
        return response
    }

    func answer(_ request: AdminRequest) async -> AdminResponse {
        do {
            return try await route(request)
        } catch let error as AdminError {
            return .error(error.status, error.code, error.message)
        } catch let error as CaptureError {
            switch error {
            case .unknownSession, .noSessionForDevice: return .error(404, "not_found", error.description)
            case .invalidHazard: return .error(400, "bad_request", error.description)
            case .unreadableDocument: return .error(500, "store_error", error.description)
            }
        } catch let error as ExportError {
            switch error {
            case .unknownSession: return .error(404, "not_found", error.description)
            case .badFormat, .badStream, .needsDirectory, .noSessions: return .error(400, "bad_request", error.description)
            case .output, .store: return .error(500, "store_error", error.description)
            }
        } catch let error as StoreError {
            return .error(500, "store_error", "\(error)")
        } catch {
            return .error(500, "internal_error", "\(error)")
        }
    }

    func route(_ request: AdminRequest) async throws -> AdminResponse {
        guard let segments = Self.segments(request.path) else { throw AdminError.badRequest("the path is not valid percent-encoded UTF-8") }
        if request.isMutating && !access.permits(request.peer) {
            throw AdminError(403, "forbidden", "\(request.peer.map { "uid \($0.uid)" } ?? "this peer") may not change state (admin.allowedUids / admin.allowedGroups)")
        }
        let method = request.method
        func match(_ pattern: String...) -> [String]? { Self.match(segments, pattern) }
        if method == "GET", match("metrics") != nil { return try await metrics() }
        if method == "GET", match("v1", "status") != nil { return .json(200, try await status()) }
        if method == "GET", match("v1", "sensors") != nil { return .json(200, ["sensors": .array(try await sensors())]) }
        if method == "GET", let address = match("v1", "sensors", "*")?[0] {
            guard let sensor = try await sensors().first(where: { $0["address"]?.string?.uppercased() == address.uppercased() }) else {
                throw AdminError.notFound("no sensor \(address) is configured or capturing")
            }
            return .json(200, sensor)
        }
        if method == "GET", match("v1", "sessions") != nil { return .json(200, try await sessions(request.query)) }
        if method == "GET", let id = match("v1", "sessions", "*", "export")?[0] { return try await export(sessionId: id, request.query) }
        if method == "GET", let id = match("v1", "sessions", "*")?[0] {
            guard let session = try await session(id) else { throw AdminError.notFound("there is no session \"\(id)\"") }
            return .json(200, AdminJSON.session(session))
        }
        if method == "POST", match("v1", "sessions") != nil { return try await startSession(request.body) }
        if method == "POST", let id = match("v1", "sessions", "*", "stop")?[0] {
            guard try await session(id) != nil else { throw AdminError.notFound("there is no session \"\(id)\"") }
            return .json(200, AdminJSON.session(try await engine.stopSession(id: id)))
        }
        if method == "POST", let id = match("v1", "sessions", "*", "hazards")?[0] {
            let hazards = try Self.hazards(request.body)
            return .json(200, AdminJSON.session(try await engine.mergeHazards(sessionId: id, hazards)))
        }
        if method == "DELETE", let id = match("v1", "sessions", "*")?[0] {
            try await engine.deleteSession(id: id)
            return .json(200, ["deleted": .string(id)])
        }
        if method == "GET", match("v1", "medals") != nil { return .json(200, try await medals(request.query)) }
        if method == "GET", segments.count >= 3, segments[0] == "v1", segments[1] == "documents" {
            return try await document(segments.dropFirst(2).joined(separator: "/"))
        }
        if method == "POST", match("v1", "resync") != nil {
            guard let resync = providers.resync else {
                throw AdminError(503, "unavailable", "resync needs the MQTT publisher, which is not running in this gateway")
            }
            return .json(200, ["result": .string(try await resync())])
        }
        if Self.knownPaths(segments) { throw AdminError(405, "method_not_allowed", "\(method) is not allowed on \(request.path)") }
        throw AdminError.notFound("no endpoint \(method) \(request.path)")
    }

    /// The segments matched by `*` in `pattern`, or `nil` when the path does not match.
    static func match(_ segments: [String], _ pattern: [String]) -> [String]? {
        guard segments.count == pattern.count else { return nil }
        var captured: [String] = []
        for (segment, expected) in zip(segments, pattern) {
            if expected == "*" {
                guard !segment.isEmpty else { return nil }
                captured.append(segment)
            } else if segment != expected {
                return nil
            }
        }
        return captured
    }

    /// Decoded path segments; `nil` if percent-decoding fails. Empty segments are kept, so
    /// `//` never silently matches a route.
    static func segments(_ path: String) -> [String]? {
        guard path.hasPrefix("/") else { return nil }
        var result: [String] = []
        for raw in path.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            guard let decoded = PercentEncoding.decode(raw) else { return nil }
            result.append(decoded)
        }
        if result.last == "" && result.count > 1 { result.removeLast() }
        return result
    }

    static func knownPaths(_ segments: [String]) -> Bool {
        guard let first = segments.first else { return false }
        if first == "metrics" { return segments.count == 1 }
        guard first == "v1", segments.count >= 2 else { return false }
        return ["status", "sensors", "sessions", "medals", "documents", "resync"].contains(segments[1])
    }

    func session(_ id: String) async throws -> SessionRecord? {
        if let open = await engine.openSessions().first(where: { $0.id == id }) { return open }
        return try await store.session(id: id)
    }
}
