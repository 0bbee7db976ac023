import ArgumentParser
import Capture
import Export
import FoundationEssentials
import GatewayConfig
import GyroStore
import Logging
import ZoneInfo

/// `gyrogate export`: sessions out of the store for analysis (docs/export.md). Reads the store
/// itself, with the daemon running or not (SQLite's WAL lets a reader beside the writer).
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write sessions as MetaBase CSV, InfluxDB line protocol or JSON Lines.",
        discussion: """
            Choose one session (--session ID), a user's sessions (--user U --range today|week|month|all) or a \
            board's (--device ADDRESS --range …). CSV is one file per session, board and stream, named \
            name_start_MAC_sensor.csv: give --out DIR, or one session and --stream for standard output. \
            --merge writes the boards of one user captured together as one table.
            """
    )

    @Option(name: .long, help: "The session to export.")
    var session: String?

    @Option(name: .long, help: "A user's sessions in --range.")
    var user: String?

    @Option(name: .long, help: "A board's sessions in --range.")
    var device: String?

    @Option(name: .long, help: "today, week, month or all (with --user or --device).")
    var range: String = "all"

    @Option(name: .long, help: "csv, influx or jsonl.")
    var format: String = "csv"

    @Option(name: .long, help: "gyro or accelerometer (default: every stream the session has; gyro with --merge).")
    var stream: String?

    @Flag(name: .long, help: "One table for the boards of one user captured together (CSV).")
    var merge = false

    @Option(name: .long, help: "Folder to write the files to (default: standard output).")
    var out: String?

    @Option(name: .long, help: "Folder of the store (the configuration's dataDirectory).")
    var dataDir: String?

    @Option(name: .long, help: "Configuration file naming the store, the time zone and the boards' names.")
    var config: String?

    @Option(name: .long, help: "IANA time zone of the time column when no configuration is given.")
    var timeZone: String?

    func validate() throws {
        let chosen = [session, user, device].compactMap { $0 }.count
        guard chosen == 1 else { throw ValidationError("name what to export with one of --session ID, --user U or --device ADDRESS") }
        guard Period(rawValue: range) != nil else { throw ValidationError("--range must be today, week, month or all, not \"\(range)\"") }
        do { _ = try ExportFormat(parsing: format) } catch { throw ValidationError("--format: \(error)") }
        if let stream { do { _ = try ExportStream(parsing: stream) } catch { throw ValidationError("--stream: \(error)") } }
        if merge && format != "csv" { throw ValidationError("--merge writes a CSV table; use --format csv") }
    }

    func run() async throws {
        var logger = Logger(label: "gyrogate")
        logger.logLevel = .error
        let configuration = try config.map(loadConfiguration)
        guard let directory = dataDir ?? configuration?.dataDirectory else { throw ValidationError("name the store with --data-dir or --config") }
        let zone = try timeZone.map { name throws -> Zone in
            do { return try Zone.named(name) } catch { throw ValidationError("\"\(name)\" is not an IANA time zone") }
        } ?? configuration?.timeZone ?? Zone.systemIdentifier().flatMap { try? Zone.named($0) } ?? .utc
        let calendar = PeriodCalendar(timeZone: zone, firstWeekday: configuration?.firstWeekday ?? 2)
        let store = try GyroStore.open(directory: directory, logger: logger)
        let names = Dictionary((configuration?.sensors ?? []).map { ($0.address.uppercased(), $0.name) }) { first, _ in first }
        let exporter = SessionExporter(store: store, zone: zone, logger: logger, boardName: { names[$0.uppercased()] })
        let format = try ExportFormat(parsing: self.format)
        let only = try stream.map { text throws(ExportError) in try ExportStream(parsing: text) }
        do {
            let files = try await self.files(exporter, store: store, calendar: calendar, format: format, only: only)
            if let out {
                let output = DirectoryOutput(directory: out)
                for file in files { try await exporter.write(file, format: format, to: output) }
                for path in await output.written { print(path) }
            } else {
                if format == .csv && files.count != 1 { throw ExportError.needsDirectory(files: files.count) }
                let output = StandardOutput()
                for file in files { try await exporter.write(file, format: format, to: output) }
            }
        } catch {
            var standardError = StandardError()
            print("gyrogate export: \(error)", to: &standardError)
            throw ExitCode(1)
        }
    }

    /// The files the selection makes, oldest session first.
    func files(_ exporter: SessionExporter, store: GyroStore, calendar: PeriodCalendar, format: ExportFormat,
               only: ExportStream?) async throws -> [ExportFile] {
        let sessions: [SessionRecord]
        let selection: String
        if let session, !merge {
            // Straight to the session's chunks: its record (thousands of chunk ids for hours) is read once.
            return try await exporter.files(sessionId: session, format: format, only: only)
        }
        if let session {
            guard let record = try await store.session(id: session) else { throw ExportError.unknownSession(session) }
            // A merge takes the user's sessions on other boards that overlap this one.
            sessions = merge ? try await store.sessions(userId: record.userId, chunkLists: false).filter { overlaps($0, record) } : [record]
            selection = "session \"\(session)\""
        } else {
            let period = Period(rawValue: range) ?? .all
            let (from, to) = calendar.interval(of: period, containing: Date())
            let all = try await store.sessions(startingFrom: from, before: to, userId: user, chunkLists: false)
            sessions = device.map { address in all.filter { $0.device.uppercased() == address.uppercased() } } ?? all
            selection = user.map { "user \"\($0)\"" } ?? "device \"\(device ?? "")\""
            if sessions.isEmpty { throw ExportError.noSessions("\(selection) in --range \(period.rawValue)") }
        }
        if merge {
            var files: [ExportFile] = []
            for group in MergeGroups.groups(sessions) where session == nil || group.contains(where: { $0.id == session }) {
                files.append(try await exporter.mergedFile(group, stream: only ?? .gyro))
            }
            return files
        }
        var files: [ExportFile] = []
        for record in sessions { files += try await exporter.files(sessionId: record.id, format: format, only: only) }
        if files.isEmpty { throw ExportError.noSessions("\(selection) with samples") }
        return files
    }

    func overlaps(_ a: SessionRecord, _ b: SessionRecord) -> Bool {
        let endA = a.endMs ?? a.lastSampleMs ?? a.startMs, endB = b.endMs ?? b.lastSampleMs ?? b.startMs
        return a.startMs <= endB && b.startMs <= endA
    }
}
