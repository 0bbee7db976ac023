import ServiceLifecycle

/// The publisher as a `Service`. Put it first in the `ServiceGroup`, so that on graceful
/// shutdown it stops last, after capture has committed its final documents.
public struct MQTTPublisherService: Service {
    public let publisher: MQTTPublisher

    public init(publisher: MQTTPublisher) { self.publisher = publisher }

    public func run() async throws {
        await withGracefulShutdownHandler {
            await publisher.run()
        } onGracefulShutdown: {
            publisher.shutdown()
        }
    }
}
