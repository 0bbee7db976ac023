import Admin
import FoundationEssentials
import GatewayConfig
import JSON
import Logging
import NIOCore
import NIOHTTP1

/// Answers one request of the live view and closes the connection, except `/events`, which
/// stays open as a Server-Sent Events stream (``LiveStream``).
///
/// Only GET and HEAD are served. The JSON routes build their admin request from a fixed path and
/// a checked parameter, so a client cannot reach the admin API's other routes from here.
final class WebHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let context: WebContext
    let logger: Logger
    private var head: HTTPRequestHead?
    private var answered = false
    private var timeout: Scheduled<Void>?

    init(context: WebContext, logger: Logger) {
        self.context = context
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        timeout = context.eventLoop.scheduleTask(in: .seconds(10)) { channel.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) { timeout?.cancel() }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let requestHead): head = requestHead
        case .body: break
        case .end:
            guard !answered, let head else { return }
            answered = true
            timeout?.cancel()
            route(context, head)
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !answered, error is HTTPParserError {
            answered = true
            return send(context, .error(400, "bad_request", "malformed HTTP request"), head: false)
        }
        context.close(promise: nil)
    }

    private func route(_ channelContext: ChannelHandlerContext, _ head: HTTPRequestHead) {
        let request = AdminRequest(method: head.method.rawValue, target: head.uri)
        guard head.method == .GET || head.method == .HEAD else {
            return send(channelContext, .error(405, "method_not_allowed", "the live view is read-only: only GET is served"), head: false,
                        extra: [("allow", "GET, HEAD")])
        }
        let isHead = head.method == .HEAD
        // Without a token, only a loopback name may be asked for: a web site that rebinds its own
        // name to 127.0.0.1 must not read the page from a visitor's browser on this machine.
        if context.settings.token == nil, !Self.isLoopbackHost(head.headers.first(name: "host") ?? "") {
            return send(channelContext, .error(403, "forbidden", "this live view answers only to a loopback address (such as 127.0.0.1) without web.tokenFile"),
                        head: isHead)
        }
        // The page and its script hold no data; everything that does needs the token.
        let needsToken = request.path.hasPrefix("/api/") || request.path == "/events"
        guard !needsToken || authorised(head, request) else {
            return send(channelContext, .error(401, "unauthorized", "this live view needs its token: open /?token=TOKEN (the token is in the file web.tokenFile names)"),
                        head: isHead, extra: [("www-authenticate", "Bearer")])
        }
        switch request.path {
        case "/", "/index.html":
            send(channelContext, AdminResponse(status: 200, contentType: "text/html; charset=utf-8", body: WebAssets.page), head: isHead)
        case "/app.js":
            send(channelContext, AdminResponse(status: 200, contentType: "text/javascript; charset=utf-8", body: WebAssets.script), head: isHead)
        case "/favicon.ico":
            send(channelContext, AdminResponse(status: 204, contentType: "image/x-icon", body: []), head: isHead)
        case "/api/status":
            forward(channelContext, AdminRequest(method: "GET", target: "/v1/status"), head: isHead)
        case "/api/sessions":
            let range = request.query["range"] ?? "today"
            guard ["today", "week", "month"].contains(range) else {
                return send(channelContext, .error(400, "bad_request", "range must be today, week or month, not \"\(range.prefix(40))\""), head: isHead)
            }
            var forwarded = AdminRequest(method: "GET", target: "/v1/sessions")
            forwarded.query = ["range": range]
            forward(channelContext, forwarded, head: isHead)
        case "/api/medals":
            var forwarded = AdminRequest(method: "GET", target: "/v1/medals")
            forwarded.query = ["user": request.query["user"] ?? ""]
            forward(channelContext, forwarded, head: isHead)
        case "/api/export":
            // One session's export, as the admin socket streams it: the page's download links.
            guard let id = request.query["session"], !id.isEmpty, id.utf8.count <= 256 else {
                return send(channelContext, .error(400, "bad_request", "?session=ID is required"), head: isHead)
            }
            var forwarded = AdminRequest(method: "GET", target: "/v1/sessions/\(PercentEncoding.encode(id, allowing: PercentEncoding.queryAllowed))/export")
            forwarded.query = ["format": request.query["format"] ?? "csv"]
            if let stream = request.query["stream"] { forwarded.query["stream"] = stream }
            forward(channelContext, forwarded, head: isHead)
        case "/api/sensors":
            let promise = channelContext.eventLoop.makePromise(of: AdminResponse.self)
            let web = self.context
            promise.completeWithTask {
                var body: [UInt8] = []
                LiveEncoding.sensors(await web.sensors.sensors(), names: web.names, nowMs: web.timelineMs(), into: &body)
                return AdminResponse(status: 200, body: body + [0x0A])
            }
            reply(channelContext, promise.futureResult, head: isHead)
        case "/events":
            guard !isHead else { return send(channelContext, AdminResponse(status: 200, contentType: "text/event-stream", body: []), head: true) }
            let lastEventId = head.headers.first(name: "last-event-id").flatMap { Int64($0) }
            guard let first = self.context.viewers.admit(channelContext.channel, after: lastEventId ?? 0) else {
                logger.warning("live view: too many viewers; refusing one", metadata: ["subsystem": "web", "limit": "\(self.context.viewers.limit)"])
                return send(channelContext, .error(503, "busy", "\(self.context.viewers.limit) viewers are connected, the most web.maxViewers allows; try again later"),
                            head: false, extra: [("retry-after", "10")])
            }
            let stream = LiveStream(first: first)
            do { try channelContext.pipeline.syncOperations.addHandler(stream) } catch { channelContext.close(promise: nil) }
        default:
            send(channelContext, .error(404, "not_found", "no page \(request.path.prefix(100)) here: the live view is at /"), head: isHead)
        }
    }

    /// Whether the request carries the configured token (`Authorization: Bearer`, or `?token=`
    /// for the page's first load and its event stream, which cannot set headers).
    private func authorised(_ head: HTTPRequestHead, _ request: AdminRequest) -> Bool {
        guard let token = context.settings.token?.value else { return true }
        var offered = request.query["token"] ?? ""
        if let header = head.headers.first(name: "authorization"), header.hasPrefix("Bearer ") { offered = String(header.dropFirst(7)) }
        return Self.constantTimeEqual(Array(offered.utf8), Array(token.utf8))
    }

    /// The `Host` header names this machine: `127.x.x.x`, `localhost` or `[::1]`, with any port.
    static func isLoopbackHost(_ header: String) -> Bool {
        var host = Substring(header.lowercased())
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            host = host[host.index(after: host.startIndex)..<close]
        } else if let colon = host.lastIndex(of: ":") {
            host = host[..<colon]
        }
        return WebSettings.isLoopback(String(host))
    }

    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<b.count { difference |= (index < a.count ? a[index] : 0) ^ b[index] }
        return difference == 0
    }

    private func forward(_ channelContext: ChannelHandlerContext, _ request: AdminRequest, head: Bool) {
        let promise = channelContext.eventLoop.makePromise(of: AdminResponse.self)
        let api = context.api
        promise.completeWithTask { await api.respond(to: request) }
        reply(channelContext, promise.futureResult, head: head)
    }

    private func reply(_ channelContext: ChannelHandlerContext, _ future: EventLoopFuture<AdminResponse>, head: Bool) {
        let bound = NIOLoopBound((self, channelContext), eventLoop: channelContext.eventLoop)
        future.whenSuccess { response in
            let (handler, channelContext) = bound.value
            guard channelContext.channel.isActive else { return }
            handler.send(channelContext, response, head: head)
        }
    }

    private func send(_ channelContext: ChannelHandlerContext, _ response: AdminResponse, head: Bool, extra: [(String, String)] = []) {
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: response.contentType)
        if response.stream == nil || head { headers.add(name: "content-length", value: String(response.body.count)) }
        headers.add(name: "cache-control", value: "no-store")
        headers.add(name: "x-content-type-options", value: "nosniff")
        headers.add(name: "content-security-policy", value: "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
        headers.add(name: "connection", value: "close")
        for (name, value) in extra { headers.add(name: name, value: value) }
        for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) { headers.add(name: name, value: value) }
        let responseHead = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        if let stream = response.stream, !head {
            return stream.send(head: responseHead, on: channelContext.channel, logger: logger)
        }
        channelContext.write(wrapOutboundOut(.head(responseHead)), promise: nil)
        if !head && !response.body.isEmpty {
            channelContext.write(wrapOutboundOut(.body(.byteBuffer(channelContext.channel.allocator.buffer(bytes: response.body)))), promise: nil)
        }
        let channel = channelContext.channel
        channelContext.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        if response.status >= 400 {
            logger.info("live view request refused", metadata: ["subsystem": "web", "path": "\(self.head?.uri.split(separator: "?").first?.prefix(100) ?? "-")",
                                                                "status": "\(response.status)"])
        }
    }
}
