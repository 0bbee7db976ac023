import Admin
import ArgumentParser
import FoundationEssentials
import GatewayConfig
import JSON
import TextTools

/// Exit codes of the commands that talk to the daemon (sysexits.h).
enum AdminExit {
    /// The daemon is not running (no socket, or nobody answers on it).
    static let notRunning: Int32 = 69
    /// The socket exists but this user may not use it.
    static let notPermitted: Int32 = 77
    /// The daemon answered with an error.
    static let requestFailed: Int32 = 1
}

/// Where the daemon's admin socket is: `--socket`, or the configuration's `admin.socketPath`.
struct SocketOptions: ParsableArguments {
    @Option(name: .long, help: "The daemon's admin socket (default: the configuration's admin.socketPath, or /run/gyrogate/admin.sock).")
    var socket: String?

    @Option(name: .long, help: "Configuration file naming the admin socket.")
    var config: String?

    @Flag(name: .long, help: "Print JSON for scripts.")
    var json = false

    func client() throws -> AdminClient {
        AdminClient(socketPath: try resolveSocketPath(socket: socket, config: config))
    }
}

func resolveSocketPath(socket: String?, config: String?) throws -> String {
    if let socket { return socket }
    if let config { return try loadConfiguration(config).admin.socketPath }
    return "/run/gyrogate/admin.sock"
}

/// Sends one request and returns the response when it is a success; otherwise prints why and
/// exits with a distinct code.
func call(_ client: AdminClient, _ method: String, _ target: String, json body: JSONValue? = nil) throws -> AdminClient.Response {
    var standardError = StandardError()
    let response: AdminClient.Response
    do { response = try client.request(method, target, json: body) } catch {
        print("gyrogate: \(error)", to: &standardError)
        switch error {
        case .notRunning: throw ExitCode(AdminExit.notRunning)
        case .notPermitted: throw ExitCode(AdminExit.notPermitted)
        default: throw ExitCode(AdminExit.requestFailed)
        }
    }
    guard (200..<300).contains(response.status) else {
        let error = response.object["error"]
        print("gyrogate: \(response.status) \(error?["code"]?.string ?? ""): \(error?["message"]?.string ?? response.text)", to: &standardError)
        throw ExitCode(AdminExit.requestFailed)
    }
    return response
}

func printResponse(_ response: AdminClient.Response) {
    print(response.text, terminator: response.text.hasSuffix("\n") ? "" : "\n")
}

func percentEncoded(_ text: String) -> String {
    PercentEncoding.encode(text, allowing: PercentEncoding.pathAllowed)
}

func percentEncodedQuery(_ text: String) -> String {
    PercentEncoding.encode(text, allowing: PercentEncoding.queryAllowed)
}

/// A field of the daemon's answer as a table shows it; `fallback` when it is missing or null.
func cell(_ value: JSONValue?, _ fallback: String = "?") -> String {
    guard let value, !value.isNull else { return fallback }
    return value.text
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show what the running daemon is doing.")

    @OptionGroup var socket: SocketOptions

    func run() async throws {
        let response = try call(try socket.client(), "GET", "/v1/status")
        if socket.json { return printResponse(response) }
        let status = JSONValue.object(response.object)
        let radio = status["radio"], broker = status["broker"], outbox = status["outbox"], capture = status["capture"]
        var table = Table(headers: ["", ""])
        table.rows = [
            ["gateway", "\(cell(status["gatewayId"])) (version \(cell(status["version"])))"],
            ["uptime", formatDuration(ms: (status["uptimeSeconds"]?.double ?? 0) * 1000)],
            ["radio", "\(cell(radio?["transport"])), controller \(cell(radio?["controller"]))"],
            ["broker", brokerLine(broker)],
            ["outbox", "\(cell(outbox?["depth"], "0")) messages, \(cell(outbox?["bytes"], "0")) bytes, oldest \(outbox?["oldestAgeSeconds"]?.double.flatMap { Int(exactly: $0.rounded(.towardZero)) }.map { "\($0) s" } ?? "-")"],
            ["parked", (outbox?["parked"]?.int ?? 0) == 0 ? "none" : "\(cell(outbox?["parked"], "0")) refused by the broker (\(cell(outbox?["lastParkedReason"], ""))); `gyrogate resync` retries them"],
            ["store", storeLine(status["store"] ?? [:])],
            ["writes", writesLine(status["store"] ?? [:])],
            ["clock", clockLine(status["clock"] ?? [:])],
            ["capture", "\(cell(capture?["committedSamples"], "0")) samples, \(cell(capture?["missingSamples"], "0")) missing, \(cell(capture?["commits"], "0")) commits, every \(cell(capture?["commitIntervalMs"])) ms"],
        ]
        if let fleet = status["fleet"] { table.rows.append(["fleet", fleetLine(fleet)]) }
        print(table.render().split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n"))
        print("")
        printSensors(status["sensors"]?.array ?? [])
    }
}

/// "FULL for …, N samples not kept, …" when the disk is full, "AT LIMIT for …" when retention
/// evicts to stay under retention.maxStoreBytes, the sizes otherwise.
/// `127.0.0.1:1883, connected`; with several brokers, which one and how many moves.
func brokerLine(_ broker: JSONValue?) -> String {
    let configured = "\(cell(broker?["host"])):\(cell(broker?["port"]))"
    guard let hosts = broker?["hosts"]?.array else { return "\(configured), \(cell(broker?["state"]))" }
    let current = broker?["connectedTo"].map { cell($0) } ?? configured
    return "\(current), \(cell(broker?["state"])) (of \(hosts.map { cell($0) }.joined(separator: ", ")); \(cell(broker?["failovers"], "0")) moves)"
}

/// `3 gateways online (gw-a: 2 held, gw-b: 1 held, gw-c offline)`, or why it is not coordinated.
func fleetLine(_ fleet: JSONValue) -> String {
    guard fleet["coordinated"]?.bool == true else { return "NOT COORDINATED (the broker cannot be reached): every sensor is tried here" }
    let gateways = fleet["gateways"]?.array ?? []
    let online = gateways.filter { $0["online"]?.bool == true }.count
    let each = gateways.map { gateway in
        "\(cell(gateway["gateway"])): " + (gateway["online"]?.bool == true ? "\(gateway["holding"]?.array?.count ?? 0) held" : "offline")
    }
    return "\(online) of \(gateways.count) gateways online (\(each.joined(separator: ", ")))"
}

func storeLine(_ store: JSONValue) -> String {
    let sizes = "\(cell(store["usedBytes"], "0")) of \(cell(store["workingLimitBytes"] ?? store["maxBytes"], "0")) bytes, "
        + "\(cell(store["evictedUnpublishedChunks"], "0")) unpublished chunks evicted"
    func since(_ key: String) -> String {
        store[key]?.double.map { formatDuration(ms: Date().timeIntervalSince1970 * 1000 - $0) } ?? "?"
    }
    switch store["state"]?.string {
    case "full":
        return "FULL for \(since("fullSinceMs")), \(cell(store["notKeptSamples"], "0")) samples not kept, \(cell(store["diskFreeBytes"])) bytes free; \(sizes)"
    case "damaged":
        return "DAMAGED: \(cell(store["detail"], "?"))"
    case "atLimit":
        return "AT LIMIT (retention.maxStoreBytes) for \(since("atLimitSinceMs")): the oldest unpublished chunks are evicted; "
            + "bring the broker back or raise the limit; \(sizes)"
    default:
        return sizes
    }
}

/// "synchronised", "board time (C4:…), kernel not synchronised; fix: …", with the last re-dating.
func clockLine(_ clock: JSONValue) -> String {
    var line = clock["state"]?.string ?? "?"
    if line == "board" { line = "board time (\(cell(clock["boardSource"])))" }
    if clock["kernelSynchronised"]?.bool == false { line += ", kernel not synchronised" }
    if let last = clock["lastRedating"], let delta = last["deltaSeconds"]?.double {
        line += "; re-dated \(delta) s (\(cell(last["reason"])))"
    }
    if let fix = clock["fix"]?.string { line += "; fix: \(fix)" }
    return line
}

/// "N bytes since start, about M bytes a day": what the store wrote (flash wear on an SD card).
func writesLine(_ store: JSONValue) -> String {
    let perDay = store["writtenBytesPerDay"]?.double.map { "about \(formatBytes(Int64($0))) a day" } ?? "a daily rate after the first minute"
    return "\(store["writtenBytes"]?.double.map { formatBytes(Int64($0)) } ?? "?") written since start, \(perDay)"
}

func printSensors(_ sensors: [JSONValue]) {
    var table = Table(headers: ["SENSOR", "NAME", "USER", "CONNECTION", "SESSION", "SAMPLES"])
    for sensor in sensors {
        let session = sensor["session"]?.object.map(JSONValue.object)
        table.rows.append([sensor["address"]?.string ?? "?", sensor["name"]?.string ?? "-", sensor["userId"]?.string ?? "-",
                           sensor["connection"]?.string ?? "-", session?["id"]?.string ?? "-", session.map { cell($0["samples"], "0") } ?? "-"])
    }
    print(table.render())
}

struct Sensors: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List configured and capturing sensors (from the running daemon).")

    @Argument(help: "One sensor's address.")
    var address: String?

    @OptionGroup var socket: SocketOptions

    func run() async throws {
        let target = address.map { "/v1/sensors/\(percentEncoded($0))" } ?? "/v1/sensors"
        let response = try call(try socket.client(), "GET", target)
        if socket.json { return printResponse(response) }
        printSensors(address == nil ? (response.object["sensors"]?.array ?? []) : [.object(response.object)])
    }
}

struct Resync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Re-publish every retained document (needs the MQTT publisher).")

    @OptionGroup var socket: SocketOptions

    func run() async throws {
        let response = try call(try socket.client(), "POST", "/v1/resync")
        if socket.json { return printResponse(response) }
        print(response.object["result"]?.string ?? response.text)
    }
}

struct Session: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start, stop or annotate a session on the running daemon.",
                                                    subcommands: [Start.self, Stop.self, Hazard.self, Delete.self])

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Start a session for a sensor.")
        @Option(name: .long, help: "The sensor's address.") var device: String
        @Option(name: .long, help: "The user id (default: the sensor's configured user).") var user: String?
        @OptionGroup var socket: SocketOptions

        func run() async throws {
            var body: [String: JSONValue] = ["device": .string(device)]
            if let user { body["userId"] = .string(user) }
            printSession(try call(try socket.client(), "POST", "/v1/sessions", json: .object(body)), json: socket.json)
        }
    }

    struct Stop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop a session.")
        @Argument(help: "The session id.") var id: String
        @OptionGroup var socket: SocketOptions

        func run() async throws {
            printSession(try call(try socket.client(), "POST", "/v1/sessions/\(percentEncoded(id))/stop"), json: socket.json)
        }
    }

    struct Hazard: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Record hazards on a session: NAME=INTENSITY ...")
        @Argument(help: "The session id.") var id: String
        @Argument(help: "NAME=INTENSITY pairs.") var hazards: [String]
        @OptionGroup var socket: SocketOptions

        func run() async throws {
            var body: [String: Int] = [:]
            for pair in hazards {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, let intensity = Int(parts[1]) else { throw ValidationError("\"\(pair)\" is not NAME=INTENSITY") }
                body[String(parts[0])] = intensity
            }
            guard !body.isEmpty else { throw ValidationError("give at least one NAME=INTENSITY") }
            printSession(try call(try socket.client(), "POST", "/v1/sessions/\(percentEncoded(id))/hazards", json: body.jsonValue), json: socket.json)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a session and its documents (downstream too).")
        @Argument(help: "The session id.") var id: String
        @OptionGroup var socket: SocketOptions

        func run() async throws {
            let response = try call(try socket.client(), "DELETE", "/v1/sessions/\(percentEncoded(id))")
            if socket.json { return printResponse(response) }
            print("deleted \(id)")
        }
    }
}

func printSession(_ response: AdminClient.Response, json: Bool) {
    if json { return printResponse(response) }
    let session = response.object
    var table = Table(headers: ["SESSION", "USER", "DEVICE", "DURATION", "SAMPLES", "HAZARDS", "STATE"])
    let hazards = (session["hazards"]?.object ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.text)" }.joined(separator: ",")
    table.rows.append([session["id"]?.string ?? "?", session["userId"]?.string ?? "?", session["device"]?.string ?? "?",
                       formatDuration(ms: (session["durationSeconds"]?.double ?? 0) * 1000), cell(session["samples"], "0"),
                       hazards.isEmpty ? "-" : hazards, session["open"]?.bool == true ? "open" : "closed"])
    print(table.render())
}
