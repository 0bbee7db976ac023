import Logging
import NIOCore
import NIOHTTP1

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `struct ucred` of <sys/socket.h> (Glibc hides it behind _GNU_SOURCE): the same layout.
struct PeerCred: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// Limits and timeouts of one admin connection.
public struct AdminServerLimits: Sendable {
    public var maxRequestLine = 8 * 1024
    public var maxHead = 16 * 1024
    public var maxBody = 64 * 1024
    /// A client must have sent its whole request this long after connecting, or it is cut off.
    public var requestTimeout: TimeAmount = .seconds(10)
    /// Connections served at once; one more is answered 503 and closed at once, so a flood
    /// of idle connections cannot exhaust the daemon's file descriptors.
    public var maxConnections = 256

    public init() {}
}

/// Reads one request, answers it, closes the connection. The request is answered from a task
/// (the API awaits the store and the capture engine), and the response is written back on
/// the channel's event loop.
final class AdminHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let api: AdminAPI
    let limits: AdminServerLimits
    let logger: Logger
    private var head: HTTPRequestHead?
    private var body: ByteBuffer?
    private var peer: PeerCredentials?
    private var finished = false
    private var timeout: Scheduled<Void>?
    private var started = NIODeadline.now()

    init(api: AdminAPI, limits: AdminServerLimits, logger: Logger) {
        self.api = api
        self.limits = limits
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        started = .now()
        let channel = context.channel
        timeout = context.eventLoop.scheduleTask(in: limits.requestTimeout) { channel.close(promise: nil) }
        if let provider = context.channel as? any SocketOptionProvider {
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            let future: EventLoopFuture<PeerCred> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
            future.whenSuccess { credentials in
                bound.value.peer = PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
            }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timeout?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !finished else { return }
        switch unwrapInboundIn(data) {
        case .head(let requestHead):
            head = requestHead
            if let length = requestHead.headers.first(name: "content-length").flatMap(Int.init), length > limits.maxBody {
                return fail(context, 413, "payload_too_large", "the body is larger than \(limits.maxBody) bytes")
            }
            // curl and others wait for this before sending a body over 1 KiB.
            if requestHead.headers.first(name: "expect")?.lowercased() == "100-continue" {
                context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: requestHead.version, status: .continue))), promise: nil)
            }
        case .body(var chunk):
            if (body?.readableBytes ?? 0) + chunk.readableBytes > limits.maxBody {
                return fail(context, 413, "payload_too_large", "the body is larger than \(limits.maxBody) bytes")
            }
            if body == nil { body = chunk } else { body!.writeBuffer(&chunk) }
        case .end:
            guard let head else { return fail(context, 400, "bad_request", "no request head") }
            finished = true
            timeout?.cancel()
            let request = AdminRequest(method: head.method.rawValue, target: head.uri,
                                       body: body.map { Array($0.readableBytesView) } ?? [], peer: peer)
            let promise = context.eventLoop.makePromise(of: AdminResponse.self)
            let api = self.api
            promise.completeWithTask { await api.respond(to: request) }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            promise.futureResult.whenSuccess { response in
                let (handler, context) = bound.value
                // The client may have gone while the request was being answered.
                guard context.channel.isActive else { return }
                handler.write(context, response, method: request.method, path: request.path)
            }
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !finished else { context.close(promise: nil); return }
        if error is HTTPParserError {
            fail(context, 400, "bad_request", "malformed HTTP request (\(error))")
        } else {
            logger.debug("admin connection error", metadata: ["subsystem": "admin", "error": "\(error)"])
            context.close(promise: nil)
        }
    }

    private func fail(_ context: ChannelHandlerContext, _ status: Int, _ code: String, _ message: String) {
        finished = true
        timeout?.cancel()
        write(context, .error(status, code, message), method: head?.method.rawValue ?? "-", path: head.map { AdminRequest(method: "", target: $0.uri).path } ?? "-")
    }

    private func write(_ context: ChannelHandlerContext, _ response: AdminResponse, method: String, path: String) {
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: response.contentType)
        if response.stream == nil { headers.add(name: "content-length", value: String(response.body.count)) }
        headers.add(name: "connection", value: "close")
        for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) { headers.add(name: name, value: value) }
        let responseHead = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: response.status), headers: headers)
        if let stream = response.stream {
            stream.send(head: responseHead, on: context.channel, logger: logger)
        } else {
            context.write(wrapOutboundOut(.head(responseHead)), promise: nil)
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: response.body)))), promise: nil)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
        let elapsed = Double((NIODeadline.now() - started).nanoseconds) / 1e6
        logger.info("admin request", metadata: [
            "subsystem": "admin", "method": "\(method)", "path": "\(path.prefix(200))", "status": "\(response.status)",
            "uid": "\(peer.map { String($0.uid) } ?? "?")", "pid": "\(peer.map { String($0.pid) } ?? "?")",
            "ms": "\(Int(elapsed))",
        ])
    }
}
