import Admin
import Capture
import GatewayConfig
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle

/// The live-view page on TCP: one page, its script, read-only JSON and a Server-Sent Events
/// stream of decimated sensor points. Nothing served here changes the gateway's state: the JSON
/// routes forward fixed GET requests to the admin API, never a client's method or path.
public struct WebServer: Service {
    public let settings: WebSettings
    let context: WebContext
    let logger: Logger
    let group: any EventLoopGroup
    /// Called with the bound port once the listener accepts connections (tests bind port 0).
    let onListening: @Sendable (Int) -> Void

    public init(settings: WebSettings, api: AdminAPI, tap: LiveTap, sensors: @escaping @Sendable () async -> [LiveSensor],
                logger: Logger, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                onListening: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.settings = settings
        self.context = WebContext(settings: settings, api: api, tap: tap, sensors: sensors)
        self.logger = logger
        self.group = eventLoopGroup
        self.onListening = onListening
    }

    public func bind() async throws -> any Channel {
        let context = self.context, logger = self.logger
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 64)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        HeadLimitHandler(maxRequestLine: 4096, maxHead: 16 * 1024),
                        ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)),
                        HTTPResponseEncoder(),
                        WebHTTPHandler(context: context, logger: logger),
                    ])
                }
            }
        do {
            return try await bootstrap.bind(host: settings.host, port: settings.port).get()
        } catch {
            throw WebSetupError("web.listen \(settings.host):\(settings.port): cannot listen (\(error)); is another program on that port?")
        }
    }

    public func run() async throws {
        let channel = try await bind()
        let port = channel.localAddress?.port ?? settings.port
        logger.info("live view listening", metadata: ["subsystem": "web", "address": "http://\(settings.host):\(port)/",
                                                      "token": "\(settings.token == nil ? "none" : "required")"])
        onListening(port)
        await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                try? await channel.closeFuture.get()
            } onGracefulShutdown: {
                channel.close(promise: nil)
            }
        } onCancel: {
            channel.close(promise: nil)
        }
        context.viewers.closeAll()
    }
}

public struct WebSetupError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// What every connection of the web listener shares.
struct WebContext: Sendable {
    let settings: WebSettings
    let api: AdminAPI
    let tap: LiveTap
    let sensors: @Sendable () async -> [LiveSensor]
    let viewers: ViewerRegistry

    init(settings: WebSettings, api: AdminAPI, tap: LiveTap, sensors: @escaping @Sendable () async -> [LiveSensor]) {
        self.settings = settings
        self.api = api
        self.tap = tap
        self.sensors = sensors
        viewers = ViewerRegistry(limit: settings.maxViewers)
    }
}

/// The open live streams, so that their number is capped and shutdown ends them.
final class ViewerRegistry: Sendable {
    let limit: Int
    private let channels = NIOLockedValueBox<[ObjectIdentifier: any Channel]>([:])

    init(limit: Int) { self.limit = limit }

    /// Admits `channel` unless `limit` viewers are connected; it leaves when it closes.
    func admit(_ channel: any Channel) -> Bool {
        let key = ObjectIdentifier(channel)
        let admitted = channels.withLockedValue { open in
            guard open.count < limit else { return false }
            open[key] = channel
            return true
        }
        if admitted { channel.closeFuture.whenComplete { [channels] _ in channels.withLockedValue { _ = $0.removeValue(forKey: key) } } }
        return admitted
    }

    var count: Int { channels.withLockedValue { $0.count } }

    func closeAll() {
        for channel in channels.withLockedValue({ Array($0.values) }) { channel.close(promise: nil) }
    }
}
