/// The optional `fleet` section: several gateways sharing sensors agree, through the broker,
/// which one captures each (docs/fleet.md). Off unless the section
/// is present; then every gateway of the fleet must name the same sensors and the same broker.
public struct FleetSettings: Sendable, Equatable {
    /// MQTT keepalive of the coordination connection: a gateway that dies is declared offline
    /// by the broker (its last will) about 1.5 times this after its last packet, and its sensors
    /// are handed on then. At least 5 (libmosquitto refuses shorter ones).
    public var keepAliveSeconds: Int = 5
    /// How often the gateway scans for the sensors it does not hold, and for how long: what it
    /// hears, with the signal, is what the fleet's rule weighs.
    public var scanEverySeconds: Int = 3
    public var scanForMs: Int = 1000

    public init(keepAliveSeconds: Int = 5, scanEverySeconds: Int = 3, scanForMs: Int = 1000) {
        self.keepAliveSeconds = keepAliveSeconds
        self.scanEverySeconds = scanEverySeconds
        self.scanForMs = scanForMs
    }
}

extension ConfigTreeReader {
    func fleet(_ top: ObjectReader) -> FleetSettings? {
        guard let section = top.object("fleet", keys: ["enabled", "keepAliveSeconds", "scanEverySeconds", "scanForMs"]) else { return nil }
        guard section.bool("enabled", default: true) else { return nil }
        var settings = FleetSettings(keepAliveSeconds: section.integer("keepAliveSeconds", default: 5, in: 5...300, unit: " s"),
                                     scanEverySeconds: section.integer("scanEverySeconds", default: 3, in: 1...300, unit: " s"),
                                     scanForMs: section.integer("scanForMs", default: 1000, in: 100...10_000, unit: " ms"))
        if settings.scanForMs > settings.scanEverySeconds * 1000 {
            sink.add(section.child("scanForMs"), "\(settings.scanForMs) ms is longer than scanEverySeconds (\(settings.scanEverySeconds) s): the scans would never pause for connection attempts")
            settings.scanForMs = settings.scanEverySeconds * 1000
        }
        return settings
    }
}
