import NIOCore
import NIOHTTP1

/// One viewer's Server-Sent Events stream: the response head and what the viewer gets first
/// (``LiveBroadcaster/admit(_:after:)``); the broadcaster writes the rest to its channel.
///
/// `points` events carry decimated samples per sensor, each event's id the newest point's
/// sequence number, and a `sensors` event follow every two seconds. A browser that reconnects sends
/// `Last-Event-ID` and gets the points it missed that the tap still holds; a new viewer gets the
/// tap's whole history (about twelve seconds), so its plots start full.
final class LiveStream: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let first: [UInt8]

    init(first: [UInt8]) {
        self.first = first
    }

    func handlerAdded(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "text/event-stream")
        headers.add(name: "cache-control", value: "no-store")
        headers.add(name: "x-accel-buffering", value: "no")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: first)))), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
}
