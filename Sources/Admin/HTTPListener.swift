import NIOCore
import NIOHTTP1
import ServiceLifecycle

/// What the admin socket and the live view's listener share: an HTTP/1.1 connection's pipeline
/// (the head's limits before the decoder, so an endless request line is cut short, then the
/// decoder, the encoder and the server's own handler) and serving until the gateway stops.
public enum HTTPListener {
    /// Adds the HTTP/1.1 handlers to a new connection, on its event loop; `handler` makes the
    /// server's own handler there (a handler is not `Sendable`).
    public static func configure(_ channel: any Channel, maxRequestLine: Int, maxHead: Int,
                                 handler: @escaping @Sendable () -> any ChannelHandler) -> EventLoopFuture<Void> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers([
                HeadLimitHandler(maxRequestLine: maxRequestLine, maxHead: maxHead),
                ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)),
                HTTPResponseEncoder(),
                handler(),
            ])
        }
    }

    /// Returns when the listening `channel` is closed: by a graceful shutdown (the requests in
    /// flight finish on their own connections) or by the task's cancellation.
    public static func serve(_ channel: any Channel) async {
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                try? await channel.closeFuture.get()
            } onGracefulShutdown: {
                channel.close(promise: nil)
            }
        } onCancel: {
            channel.close(promise: nil)
        }
    }
}
