import ArgumentParser
import Capture
import Foundation
import GatewayConfig
import GyroStore
import Logging

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

    func open() throws -> (GyroStore, PeriodCalendar) {
        var logger = Logger(label: "gyrogate")
        logger.logLevel = .error
        let configuration = try config.map(loadConfiguration)
        guard let directory = dataDir ?? configuration?.dataDirectory else {
            throw ValidationError("name the store with --data-dir or --config")
        }
        let zone = try timeZone.map { name in
            guard let zone = TimeZone(identifier: name) else { throw ValidationError("\"\(name)\" is not an IANA time zone") }
            return zone
        } ?? configuration?.timeZone ?? .current
        let calendar = PeriodCalendar(timeZone: zone, firstWeekday: configuration?.firstWeekday ?? 2)
        return (try GyroStore.open(directory: directory, logger: logger), calendar)
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
        let (store, calendar) = try location.open()
        let report = try await SessionReport.load(from: store, period: period, userId: user, calendar: calendar)
        if location.json {
            try printJSON([
                "range": period.rawValue, "count": report.count, "durationSeconds": report.durationMs / 1000, "samples": report.samples,
                "sessions": report.sessions.map { session -> [String: Any] in
                    ["id": session.id, "userId": session.userId, "device": session.device, "date": session.localDate,
                     "startMs": session.startMs, "endMs": session.endMs as Any, "durationSeconds": session.durationMs / 1000,
                     "samples": session.samples, "missing": session.expected - session.samples, "open": session.isOpen,
                     "chunks": session.chunkIds.count + session.accelChunkIds.count]
                },
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
        let (store, _) = try location.open()
        let body = try await store.document(try DocumentPaths.medals(userId: user))
        let earned = (body.flatMap { try? JSONSerialization.jsonObject(with: Data($0)) as? [String: Bool] }) ?? [:]
        if location.json {
            try printJSON(Dictionary(uniqueKeysWithValues: Capture.Medals.names.map { ($0, earned[$0] ?? false) }))
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
            let (store, _) = try location.open()
            if DocumentPath.isCollectionPath(path) {
                let ids = try await store.documentIds(inCollection: path)
                if location.json { try printJSON(ids) } else { ids.forEach { print($0) } }
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
