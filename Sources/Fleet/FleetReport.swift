import JSON

/// What one gateway of a fleet tells the others, retained at `gyrogate/fleet/<gateway>`: that it
/// is there, which sensors it holds (connected), which it hears advertising and how loud, and how
/// many more it could hold. Its last will is the same document with `online` false.
public struct FleetReport: Sendable, Equatable {
    public var gateway: String
    public var online: Bool
    /// The gateway's wall clock when it wrote this (for the status; the rule does not use it).
    public var atMs: Double
    /// Connections the gateway could still open (`bluetooth.maxSensors` less those it holds).
    public var freeSlots: Int
    /// Sensors connected to this gateway now.
    public var holding: Set<String>
    /// Sensors heard advertising at the last scan, with their RSSI (dBm).
    public var hears: [String: Int]
    /// Sensors whose link to this gateway ended with a session open, which this gateway handed
    /// on (or is about to): sensor to session id, until a gateway takes the hand-off.
    public var handing: [String: String]

    public init(gateway: String, online: Bool = true, atMs: Double = 0, freeSlots: Int = 0,
                holding: Set<String> = [], hears: [String: Int] = [:], handing: [String: String] = [:]) {
        self.gateway = gateway
        self.online = online
        self.atMs = atMs
        self.freeSlots = freeSlots
        self.holding = holding
        self.hears = hears
        self.handing = handing
    }

    /// The retained document.
    public func encoded() -> [UInt8] {
        let object: JSONValue = .object([
            "gateway": .string(gateway), "online": .bool(online), "atMs": .integer(Int64(atMs)),
            "freeSlots": .integer(Int64(freeSlots)), "holding": .array(holding.sorted().map(JSONValue.string)),
            "hears": .object(hears.mapValues { .integer(Int64($0)) }),
            "handing": .object(handing.mapValues(JSONValue.string)),
        ])
        return object.encoded()
    }

    /// Reads another gateway's document. `topicGateway` is the last level of its topic: a
    /// document claiming another gateway's name is refused, so one gateway cannot speak for another
    /// by mistake (a copied config).
    public init(parsing payload: [UInt8], topicGateway: String) throws(FleetError) {
        let object: [String: JSONValue]
        do { object = try JSONValue.object(parsing: payload) } catch {
            throw .badReport(gateway: topicGateway, "not a JSON object (\(error))")
        }
        guard let gateway = object["gateway"]?.string else { throw .badReport(gateway: topicGateway, "no \"gateway\" string") }
        guard gateway == topicGateway else {
            throw .badReport(gateway: topicGateway, "names gateway \"\(gateway)\"; two gateways may share one gatewayId")
        }
        guard let online = object["online"]?.bool else { throw .badReport(gateway: gateway, "no \"online\" boolean") }
        var hears: [String: Int] = [:]
        for (address, value) in object["hears"]?.object ?? [:] {
            guard let rssi = value.int, (-127...20).contains(rssi) else {
                throw .badReport(gateway: gateway, "hears \(address) at \(value.text), not an RSSI in dBm (-127...20)")
            }
            hears[address] = rssi
        }
        var holding: Set<String> = []
        for value in object["holding"]?.array ?? [] {
            guard let address = value.string else { throw .badReport(gateway: gateway, "\"holding\" has \(value.text), not an address") }
            holding.insert(address)
        }
        var handing: [String: String] = [:]
        for (address, value) in object["handing"]?.object ?? [:] {
            guard let session = value.string, !session.isEmpty else {
                throw .badReport(gateway: gateway, "hands on \(address) with \(value.text), not a session id")
            }
            handing[address] = session
        }
        self.init(gateway: gateway, online: online, atMs: object["atMs"]?.double ?? 0,
                  freeSlots: max(0, object["freeSlots"]?.int ?? 0), holding: holding, hears: hears, handing: handing)
    }
}

/// A fleet document that cannot be used; the report is ignored and the reason logged.
public enum FleetError: Error, Sendable, Equatable, CustomStringConvertible {
    case badReport(gateway: String, String)

    public var description: String {
        switch self {
        case let .badReport(gateway, reason): "the fleet report of gateway \"\(gateway)\" is ignored: \(reason)"
        }
    }
}
