import Admin
import ArgumentParser
import Capture
import FoundationEssentials
import GatewayConfig
import GyroStore
import JSON
import Logging
import ZoneInfo

/// Where the offline commands find the store: `--data-dir`, or the one a configuration names.
struct StoreLocation: ParsableArguments {
    @Option(name: .long, help: "Folder of the store (the configuration's dataDirectory).")
    var dataDir: String?

    @Option(name: .long, help: "Configuration file naming the store and the time zone.")
    var config: String?

    @Option(name: .long, help: "IANA time zone for today/week/month when no configuration is given.")
    var timeZone: String?

    @Flag(name: .long, help: "Print JSON for scripts.")
    var json = false

    @Option(name: .long, help: "Ask the running daemon on this admin socket (the default unless --data-dir is given).")
    var socket: String?

    /// The daemon to ask, or `nil` to read the store directly: with `--data-dir`, or with
    /// `--config` when the daemon is not running (then the store is read offline).
    func daemonClient() throws -> AdminClient? {
        if dataDir != nil { return nil }
        let path = try resolveSocketPath(socket: socket, config: config)
        if socket == nil, config != nil, AdminSocketFile.probe(path) != .live { return nil }
        return AdminClient(socketPath: path)
    }

    func open() throws -> (GyroStore, PeriodCalendar) {
        var logger = Logger(label: "gyrogate")
        logger.logLevel = .error
        let configuration = try config.map(loadConfiguration)
        guard let directory = dataDir ?? configuration?.dataDirectory else {
            throw ValidationError("name the store with --data-dir or --config")
        }
        let zone = try timeZone.map { name throws -> Zone in
            do { return try Zone.named(name) } catch ZoneInfoError.unknownZone, ZoneInfoError.invalidName {
                throw ValidationError("\"\(name)\" is not an IANA time zone")
            } catch { throw ValidationError("--time-zone \"\(name)\": \(error)") }
        } ?? configuration?.timeZone ?? systemZone()
        let calendar = PeriodCalendar(timeZone: zone, firstWeekday: configuration?.firstWeekday ?? 2)
        return (try GyroStore.open(directory: directory, logger: logger), calendar)
    }

    /// The machine's zone, as Foundation's `TimeZone.current` was: UTC when it has no name.
    func systemZone() -> Zone {
        Zone.systemIdentifier().flatMap { try? Zone.named($0) } ?? .utc
    }
}

struct Sessions: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List sessions of today, this week or this month from the store.")

    @Option(name: .long, help: "today, week, month or all.")
    var range: String = "today"

    @Option(name: .long, help: "Only this user's sessions.")
    var user: String?

    @OptionGroup var location: StoreLocation

    func run() async throws {
        guard let period = Period(rawValue: range) else { throw ValidationError("--range must be today, week, month or all, not \"\(range)\"") }
        if let client = try location.daemonClient() {
            let response = try call(client, "GET", "/v1/sessions?range=\(period.rawValue)" + (user.map { "&user=\(percentEncodedQuery($0))" } ?? ""))
            if location.json { return printResponse(response) }
            let report = response.object
            var table = Table(headers: ["SESSION", "USER", "DEVICE", "DATE", "DURATION", "SAMPLES", "MISSING", "STATE"])
            for session in report["sessions"]?.array ?? [] {
                table.rows.append([session["id"]?.string ?? "?", session["userId"]?.string ?? "?", session["device"]?.string ?? "?",
                                   session["date"]?.string ?? "?", formatDuration(ms: (session["durationSeconds"]?.double ?? 0) * 1000),
                                   cell(session["samples"], "0"), cell(session["missing"], "0"), session["open"]?.bool == true ? "open" : "closed"])
            }
            print(table.render())
            print("\(cell(report["count"], "0")) sessions, \(formatDuration(ms: (report["durationSeconds"]?.double ?? 0) * 1000)), \(cell(report["samples"], "0")) samples (\(period.rawValue))")
            return
        }
        let (store, calendar) = try location.open()
        let report = try await SessionReport.load(from: store, period: period, userId: user, calendar: calendar)
        if location.json {
            printJSON([
                "range": .string(period.rawValue), "count": report.count.jsonValue, "durationSeconds": (report.durationMs / 1000).jsonValue,
                "samples": report.samples.jsonValue, "sessions": .array(report.sessions.map(AdminJSON.session)),
            ])
            return
        }
        var table = Table(headers: ["SESSION", "USER", "DEVICE", "DATE", "DURATION", "SAMPLES", "MISSING", "STATE"])
        for session in report.sessions {
            table.rows.append([session.id, session.userId, session.device, session.localDate, formatDuration(ms: session.durationMs),
                               String(session.samples), String(session.expected - session.samples), session.isOpen ? "open" : "closed"])
        }
        print(table.render())
        print("\(report.count) sessions, \(formatDuration(ms: report.durationMs)), \(report.samples) samples (\(period.rawValue))")
    }
}

struct Medals: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show a user's medals and trophies from the store.")

    @Option(name: .long, help: "The user id.")
    var user: String

    @OptionGroup var location: StoreLocation

    func run() async throws {
        if let client = try location.daemonClient() {
            let response = try call(client, "GET", "/v1/medals?user=\(percentEncodedQuery(user))")
            let medals = (response.object["medals"]?.object ?? [:]).compactMapValues(\.bool)
            if location.json { return printJSON(medals.jsonValue) }
            var table = Table(headers: ["MEDAL", "EARNED"])
            for name in Capture.Medals.names { table.rows.append([name, medals[name] == true ? "yes" : "no"]) }
            return print(table.render())
        }
        let (store, _) = try location.open()
        let body = try await store.document(try DocumentPaths.medals(userId: user))
        let earned = (body.flatMap { try? JSONValue.object(parsing: $0) } ?? [:]).compactMapValues(\.bool)
        if location.json {
            printJSON(Dictionary(uniqueKeysWithValues: Capture.Medals.names.map { ($0, earned[$0] ?? false) }).jsonValue)
            return
        }
        var table = Table(headers: ["MEDAL", "EARNED"])
        for name in Capture.Medals.names { table.rows.append([name, earned[name] == true ? "yes" : "no"]) }
        print(table.render())
    }
}

struct Documents: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Read documents from the store.", subcommands: [Get.self])

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print one document, or the ids of a collection.")

        @Argument(help: "A document path (records/ID) or a collection path (records).")
        var path: String

        @OptionGroup var location: StoreLocation

        func run() async throws {
            if let client = try location.daemonClient() {
                let response = try call(client, "GET", "/v1/documents/\(percentEncoded(path))")
                if let ids = response.object["ids"]?.array?.compactMap(\.string), response.object["collection"] != nil {
                    if location.json { printJSON(ids.jsonValue) } else { ids.forEach { print($0) } }
                    return
                }
                return printResponse(response)
            }
            let (store, _) = try location.open()
            if DocumentPath.isCollectionPath(path) {
                let ids = try await store.documentIds(inCollection: path)
                if location.json { printJSON(ids.jsonValue) } else { ids.forEach { print($0) } }
                return
            }
            let documentPath = try DocumentPath(path)
            guard let body = try await store.document(documentPath) else {
                var standardError = StandardError()
                print("no document at \(path)", to: &standardError)
                throw ExitCode(1)
            }
            print(String(decoding: body, as: UTF8.self))
        }
    }
}
