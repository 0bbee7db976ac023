import FoundationEssentials
import Glibc
import JSON
import ZoneInfo

extension GatewayConfiguration {
    /// The environment variable that may carry the MQTT password instead of `mqtt.passwordFile`.
    public static let passwordVariable = "GYROGATE_MQTT_PASSWORD"

    /// Reads and validates a configuration file.
    /// - throws: `ConfigError` listing every problem, each named by its key path.
    public static func load(path: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) -> GatewayConfiguration {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw .unreadable(path: path, reason: describe(readError: error))
        }
        let base = URL(fileURLWithPath: path).deletingLastPathComponent().path
        return try parse(data, source: path, baseDirectory: base, environment: environment)
    }

    public static func parse(_ data: Data, source: String = "configuration", baseDirectory: String, environment: [String: String] = [:]) throws(ConfigError) -> GatewayConfiguration {
        let root: JSONValue
        do { root = try JSONValue(parsing: data) } catch {
            throw .notJSON(path: source, reason: error.reason)
        }
        let sink = ProblemSink()
        let reader = ConfigTreeReader(sink: sink, baseDirectory: baseDirectory, environment: environment)
        let config = reader.read(root)
        if let config, sink.problems.isEmpty { return config }
        throw .invalid(sink.problems.isEmpty ? [ConfigProblem(path: "", message: "expected a JSON object at the top level")] : sink.problems)
    }

    /// The system's reason ("No such file or directory"), not the error's structure, which is
    /// all FoundationEssentials prints.
    private static func describe(readError error: any Error) -> String {
        if let posix = (error as? CocoaError)?.userInfo["NSUnderlyingError"] as? POSIXError {
            return String(cString: strerror(posix.code.rawValue))
        }
        return String(describing: error)
    }
}

/// Walks the JSON tree section by section; each section lists its keys once.
struct ConfigTreeReader {
    let sink: ProblemSink
    let baseDirectory: String
    let environment: [String: String]

    static let topKeys = ["gatewayId", "dataDirectory", "timeZone", "firstWeekday", "bluetooth", "sensors", "discovery",
                          "gyro", "accelerometer", "capture", "sessions", "mqtt", "admin", "location", "retention", "boards",
                          "homeAssistant", "web", "fleet"]
    static let weekdays = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    func read(_ root: JSONValue) -> GatewayConfiguration? {
        guard let top = ObjectReader(root, path: "", keys: Self.topKeys, sink: sink) else { return nil }
        let gatewayId = identifier(top, "gatewayId", default: nil) ?? ""
        let dataDirectory = resolve(top.string("dataDirectory", default: "data") ?? "data")
        // Without the key, the machine's zone; one it cannot name (Foundation called it "GMT") is
        // refused below, as before, rather than silently taken as UTC.
        let zoneName = top.string("timeZone", default: Zone.systemIdentifier() ?? "GMT") ?? "UTC"
        var zone = Zone.utc
        switch Result(catching: { () throws(ZoneInfoError) in try Zone.named(zoneName) }) {
        case .success(let named) where zoneName.contains("/") || zoneName == "UTC": zone = named
        case .failure(.malformed(let path, let problem)):
            sink.add("timeZone", "\"\(zoneName)\" cannot be used: \(path) is not a valid zone file (\(problem)); reinstall the tzdata package")
        case .failure(.unreadable(let path, let reason)):
            sink.add("timeZone", "\"\(zoneName)\" cannot be used: cannot read \(path) (\(reason))")
        default: sink.add("timeZone", "\"\(zoneName)\" is not an IANA time zone name (for example \"Europe/London\")")
        }
        let weekdayName = (top.string("firstWeekday", default: "monday") ?? "monday").lowercased()
        var firstWeekday = 2
        if let index = Self.weekdays.firstIndex(of: weekdayName) { firstWeekday = index + 1 }
        else { sink.add("firstWeekday", "\"\(weekdayName)\" is not a day; expected one of \(Self.weekdays.joined(separator: ", "))") }

        var configuration = GatewayConfiguration(
            gatewayId: gatewayId, dataDirectory: dataDirectory, timeZone: zone, firstWeekday: firstWeekday,
            bluetooth: bluetooth(top), sensors: sensors(top), discovery: discovery(top),
            gyro: gyro(top), accelerometer: accelerometer(top), capture: capture(top), sessions: sessions(top),
            mqtt: mqtt(top, gatewayId: gatewayId), admin: admin(top), location: location(top), retention: retention(top)
        )
        configuration.boards = boards(top)
        configuration.homeAssistant = homeAssistant(top)
        configuration.web = web(top)
        configuration.fleet = fleet(top)
        return configuration
    }

    /// Ids end up in MQTT topics and Firestore paths: no separators, wildcards or leading `$`.
    func identifier(_ section: ObjectReader, _ key: String, default fallback: String?) -> String? {
        guard let text = section.string(key, default: fallback) else { return nil }
        if let problem = Self.identifierProblem(text) { section.sink.add(section.child(key), problem) }
        return text
    }

    static func identifierProblem(_ text: String) -> String? {
        if text.isEmpty { return "must not be empty" }
        if text.hasPrefix("$") { return "\"\(text)\" must not start with \"$\" (reserved by MQTT brokers)" }
        if let bad = text.first(where: { "/+#".contains($0) || $0.isNewline || $0 == "\0" }) {
            return "\"\(text)\" must not contain \"\(bad)\" (it would change the MQTT topic and the document path)"
        }
        return text.count > 128 ? "is longer than 128 characters" : nil
    }

    func resolve(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        return URL(fileURLWithPath: baseDirectory).appendingPathComponent(path).standardizedFileURL.path
    }

    func existingFile(_ section: ObjectReader, _ key: String, required: Bool) -> String? {
        guard section.has(key) || required else { return nil }
        guard let raw = section.string(key, default: required ? nil : "") else { return nil }
        let path = resolve(raw)
        var isDirectory = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            sink.add(section.child(key), "file \"\(path)\" does not exist")
        } else if isDirectory {
            sink.add(section.child(key), "\"\(path)\" is a folder, expected a file")
        } else if !FileManager.default.isReadableFile(atPath: path) {
            sink.add(section.child(key), "file \"\(path)\" is not readable by this user")
        }
        return path
    }
}
