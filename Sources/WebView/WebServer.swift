import Admin
import Capture
import GatewayConfig
import HostTime
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

    public init(settings: WebSettings, api: AdminAPI, tap: LiveTap, sensors: any LiveSensorSource,
                logger: Logger, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                onListening: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.settings = settings
        self.context = WebContext(settings: settings, api: api, tap: tap, sensors: sensors, loop: eventLoopGroup.next())
        self.logger = logger
        self.group = eventLoopGroup
        self.onListening = onListening
    }

    public func bind() async throws -> any Channel {
        let context = self.context, logger = self.logger
        // Every connection on the broadcaster's loop: its writes to the viewers then need no
        // wake-up of another thread, and the page's few requests need no more than one loop.
        let bootstrap = ServerBootstrap(group: context.viewers.loop)
            .serverChannelOption(ChannelOptions.backlog, value: 64)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                HTTPListener.configure(channel, maxRequestLine: 4096, maxHead: 16 * 1024) {
                    WebHTTPHandler(context: context, logger: logger)
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
        await HTTPListener.serve(channel)
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
    let sensors: any LiveSensorSource
    /// Configured sensor names by upper-case address.
    let names: [String: String]
    let viewers: LiveBroadcaster

    /// Now on the timeline the live tap's samples are stamped on (the sensors'), so that the
    /// page places them right whatever the wall clock did.
    func timelineMs() -> Double { WebContext.timelineMs(api) }

    static func timelineMs(_ api: AdminAPI) -> Double {
        ((api.engine.clock ?? GatewayClock.process).timeline() * 1000).rounded()
    }

    init(settings: WebSettings, api: AdminAPI, tap: LiveTap, sensors: any LiveSensorSource, loop: any EventLoop) {
        self.settings = settings
        self.api = api
        self.tap = tap
        self.sensors = sensors
        names = Dictionary(api.configuration.sensors.map { ($0.address.uppercased(), $0.name) }, uniquingKeysWith: { first, _ in first })
        viewers = LiveBroadcaster(limit: settings.maxViewers, tap: tap, loop: loop, source: sensors, names: names,
                                  timelineMs: { [api] in WebContext.timelineMs(api) })
    }
}
