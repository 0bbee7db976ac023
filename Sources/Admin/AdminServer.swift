import FoundationEssentials
import GatewayConfig
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import TextTools

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The admin API on a unix domain socket: HTTP/1.1, one request per connection.
///
/// Binding: a stale socket file (nobody answers) is replaced; a live one is never taken over.
/// The file is created under a 0077 umask, then given the configured mode and group, so it
/// is never more open than configured. On graceful shutdown the server stops accepting, lets
/// the requests in flight finish and removes the socket file.
public struct AdminServer: Service {
    public let api: AdminAPI
    public let settings: AdminSettings
    public let limits: AdminServerLimits
    public let logger: Logger
    /// Called once the socket accepts connections (the daemon sends READY=1 from here).
    public let onReady: @Sendable () -> Void
    let group: any EventLoopGroup

    public init(api: AdminAPI, settings: AdminSettings, limits: AdminServerLimits = AdminServerLimits(), logger: Logger,
                eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, onReady: @escaping @Sendable () -> Void = {}) {
        self.api = api
        self.settings = settings
        self.limits = limits
        self.logger = logger
        self.onReady = onReady
        self.group = eventLoopGroup
    }

    /// Binds the socket; the returned channel is the listening one.
    public func bind() async throws -> any Channel {
        let path = settings.socketPath
        let folder = PathText.parent(of: path)
        if !folder.isEmpty && !FileManager.default.fileExists(atPath: folder) {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
        }
        if try AdminSocketFile.prepare(path) == .stale {
            logger.warning("replaced a stale admin socket left by an earlier run", metadata: ["subsystem": "admin", "socket": "\(path)"])
        }
        let api = self.api, limits = self.limits, logger = self.logger
        let connections = NIOLockedValueBox(0)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 512)
            .childChannelInitializer { channel in
                let admitted = connections.withLockedValue { count in
                    guard count < limits.maxConnections else { return false }
                    count += 1
                    return true
                }
                guard admitted else {
                    logger.warning("too many admin connections; refusing one", metadata: ["subsystem": "admin", "limit": "\(limits.maxConnections)"])
                    return channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(RefuseHandler())
                    }
                }
                channel.closeFuture.whenComplete { _ in connections.withLockedValue { $0 -= 1 } }
                return HTTPListener.configure(channel, maxRequestLine: limits.maxRequestLine, maxHead: limits.maxHead) {
                    AdminHTTPHandler(api: api, limits: limits, logger: logger)
                }
            }
        let previous = umask(0o077)
        let channel: any Channel
        do {
            channel = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: false).get()
            umask(previous)
        } catch {
            umask(previous)
            throw AdminSetupError("admin socket \(path): bind failed (\(error))")
        }
        do {
            try AdminSocketFile.secure(path, mode: settings.mode, group: settings.group)
        } catch {
            try? await channel.close()
            unlink(path)
            throw error
        }
        return channel
    }

    /// Answers 503 at once and closes: the connection limit is reached.
    final class RefuseHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer

        func channelActive(context: ChannelHandlerContext) {
            let response = AdminResponse.error(503, "busy", "too many admin connections; try again")
            var out = context.channel.allocator.buffer(capacity: 200 + response.body.count)
            out.writeString("HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: \(response.body.count)\r\nconnection: close\r\n\r\n")
            out.writeBytes(response.body)
            let channel = context.channel
            context.writeAndFlush(NIOAny(out)).whenComplete { _ in channel.close(promise: nil) }
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}
    }

    public func run() async throws {
        let channel = try await bind()
        logger.info("admin socket listening", metadata: ["subsystem": "admin", "socket": "\(settings.socketPath)",
                                                          "mode": "\(String(settings.mode, radix: 8))", "group": "\(settings.group ?? "-")"])
        onReady()
        await HTTPListener.serve(channel)
        unlink(settings.socketPath)
    }
}
