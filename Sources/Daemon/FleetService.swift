import FoundationEssentials
import Capture
import Fleet
import GatewayConfig
import JSON
import Logging
import MQTTPublisher
import PosixThreads
import Sensors
import ServiceLifecycle

/// The sensors ask the fleet's coordinator before connecting (its methods are the protocol's);
/// session hand-offs cross it as documents.
extension FleetCoordinator: ConnectionClaims {
    public func release(_ address: String, _ handoff: SessionHandoff) {
        release(address, session: handoff.session.id, payload: handoff.encoded())
    }

    public func handoff(for address: String) async -> SessionHandoff? {
        guard let payload = await handoffPayload(for: address) else { return nil }
        do { return try SessionHandoff(parsing: payload, device: address) } catch {
            unusableHandoff("\(error)")
            return nil
        }
    }
}

/// A fleet of gateways (the `fleet` section): the coordinator that decides, and the MQTT channel
/// that carries every gateway's report. Runs until graceful shutdown; then, after the sensors
/// have disconnected (this service is started before them and so stops after them), it publishes
/// this gateway's report as offline, so that the others take its sensors at once rather than
/// after the last will's delay.
struct FleetService: Service {
    let coordinator: FleetCoordinator
    let channel: FleetChannel
    /// How long a gateway listens before it claims anything: one scan period and a scan.
    let settle: Duration

    /// The coordinator and its channel for `configuration`; nil without a `fleet` section.
    static func make(_ configuration: GatewayConfiguration, publisher: MQTTPublisher, logger: Logger) throws -> FleetService? {
        guard let settings = configuration.fleet else { return nil }
        let pending = LockedState<FleetChannel?>(nil)
        let coordinator = FleetCoordinator(gateway: configuration.gatewayId, slots: configuration.bluetooth.maxSensors, logger: logger,
                                           now: { Date().timeIntervalSince1970 * 1000 }) { report in
            pending.withLock { $0 }?.publish(report)
        }
        let handlers = FleetChannel.Handlers(
            connected: { up in Task { await coordinator.channel(up: up) } },
            report: { gateway, payload in Task { await coordinator.received(topicGateway: gateway, payload: payload) } },
            handoff: { sensor, payload in Task { await coordinator.receivedHandoff(sensor: sensor, payload: payload) } })
        guard let channel = try FleetChannel(configuration: PublisherConfiguration(configuration), keepAliveSeconds: settings.keepAliveSeconds,
                                             will: coordinator.will, handlers: handlers, logger: logger) else {
            throw FleetSetupError("no MQTT client for the fleet's coordination (libmosquitto could not allocate one)")
        }
        pending.withLock { $0 = channel }
        let prefix = PublisherConfiguration(configuration).topicPrefix
        Task { await coordinator.useHandoffTransport(Self.handoffTransport(publisher, prefix: prefix)) }
        channel.publish(FleetReport(gateway: configuration.gatewayId, freeSlots: configuration.bluetooth.maxSensors).encoded())
        return FleetService(coordinator: coordinator, channel: channel,
                            settle: .seconds(settings.scanEverySeconds) + .milliseconds(settings.scanForMs + 500))
    }

    func run() async throws {
        await coordinator.start(settle: settle)
        channel.start()
        try? await gracefulShutdown()
        let channel = self.channel
        let final = coordinator.will
        await withCheckedContinuation { continuation in
            _ = DetachedThread.start(name: "fleet-stop") {
                channel.stop(final: final)
                continuation.resume()
            }
        }
    }

    /// Hand-offs on the publisher's connection, behind the rows its outbox held (``HandoffTransport``):
    /// tried again for a minute while the broker is away.
    static func handoffTransport(_ publisher: MQTTPublisher, prefix: String) -> HandoffTransport {
        HandoffTransport(outboxDelivered: { await publisher.waitUntilDelivered() }) { sensor, payload in
            let topic = FleetChannel.handoffTopic(prefix: prefix, sensor: sensor)
            for _ in 0..<60 {
                if await publisher.publishDirect(topic: topic, payload: payload, retain: true) { return true }
                try? await Task.sleep(for: .seconds(1))
                await publisher.waitUntilDelivered()
            }
            return false
        }
    }

    /// The admin status's `fleet` object.
    func status(sensors: [String]) async -> JSONValue {
        let status = await coordinator.status(sensors: sensors)
        return [
            "gateway": .string(status.gateway), "coordinated": .bool(status.coordinated),
            "gateways": .array(status.gateways.map { report in
                ["gateway": .string(report.gateway), "online": .bool(report.online), "freeSlots": report.freeSlots.jsonValue,
                 "holding": .array(report.holding.sorted().map(JSONValue.string)),
                 "hears": .object(report.hears.mapValues { $0.jsonValue }),
                 "handing": .object(report.handing.mapValues(JSONValue.string))]
            }),
            "sensors": .object(status.sensors.mapValues { decision in
                ["owner": decision.owner.jsonValue, "reason": .string(decision.reason)]
            }),
        ]
    }
}

struct FleetSetupError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
