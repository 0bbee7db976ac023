// The `fill` mode: sessions from FillPlan, newest first, each built by SessionBuilder and
// committed in one transaction, until the store's live pages reach `--bytes`. Every outbox row
// is acknowledged through the store's API (published) except the newest `--unpublished-chunks`
// chunks' and their sessions' documents; then each user's medals; then, with `--open-session`,
// one open session through the capture engine (OpenSessionFill).
//
// Written newest first so that the fill stops at the size exactly with the newest sessions
// in it; retention orders by chunk end time, not by row, so the order of the rows matters only
// for where pages lie in the file.
import Capture
import FoundationEssentials
import GyroStore
import Glibc
import Logging
import ZoneInfo

enum StoreFill {
    static func run(_ options: FillOptions, logger: Logger) async throws {
        let started = ContinuousClock.now
        let zone = options.zone == "UTC" ? Zone.utc : try Zone.named(options.zone)
        let calendar = PeriodCalendar(timeZone: zone)
        // No limit of its own while filling: the benchmark sets retention.maxStoreBytes.
        let store = try GyroStore.open(directory: options.directory, maxBytes: 1 << 40, logger: logger)
        let outbox = try OutboxRows(databasePath: options.directory + "/" + GyroStore.fileName)
        var lastSeq = outbox.lastSeq()
        let nowMs = (Date().timeIntervalSince1970 * 1000).rounded()
        var plan = FillPlan(options: options, nowMs: nowMs)
        let builder = SessionBuilder(options: options, calendar: calendar)
        var used = try await store.usedBytes()
        var unpublishedLeft = options.unpublishedChunks
        var written: [String: [SessionRecord]] = [:]
        var ids: Set<String> = []
        var totals = (sessions: 0, chunks: 0, samples: Int64(0), unpublished: 0, oldestMs: nowMs)
        while used < options.targetBytes, let planned = plan.next() {
            let base = "\(options.user(planned.board))___\(Int64((planned.startMs / 1000).rounded(.down)))"
            var id = base, suffix = 1
            while ids.contains(id) { suffix += 1; id = "\(base)_\(suffix)" }
            ids.insert(id)
            let built = try builder.build(planned, id: id, rng: &plan.rng)
            try await store.commit(built.changes)
            // The newest chunks stay in the outbox (and so do their session's documents).
            let keep = Set(built.session.chunkIds.suffix(unpublishedLeft).map { "realtime_data/\($0)" })
            unpublishedLeft -= keep.count
            let rows = try outbox.rows(after: lastSeq)
            lastSeq = rows.last?.seq ?? lastSeq
            let acknowledged = rows.filter { row in
                !keep.contains(row.path) && (keep.isEmpty || !row.path.hasSuffix("/" + built.session.id))
            }.map(\.seq)
            try await store.acknowledge(acknowledged)
            written[built.session.userId, default: []].append(built.session)
            totals.sessions += 1
            totals.chunks += built.session.chunkIds.count
            totals.samples += built.samples
            totals.unpublished += keep.count
            totals.oldestMs = min(totals.oldestMs, built.session.startMs)
            used = try await store.usedBytes()
            if totals.sessions % 25 == 0 {
                print("filled \(used >> 20) MiB of \(options.targetBytes >> 20): \(totals.sessions) sessions, "
                      + "\(totals.samples) samples, \(Int((ContinuousClock.now - started) / .seconds(1))) s")
                fflush(nil)
            }
        }
        try await writeMedals(written, store: store, calendar: calendar, outbox: outbox, after: lastSeq)
        if let device = options.openSession {
            let open = try await OpenSessionFill.run(options, device: device, store: store, calendar: calendar,
                                                     outbox: outbox, logger: logger)
            print("OPEN \(open.id) \(device) chunks=\(open.chunkIds.count) samples=\(open.samples) startMs=\(Int64(open.startMs))")
        }
        used = try await store.usedBytes()
        // Stopped as the gateway stops: the next open does not copy the last WAL cycle again.
        _ = try await store.endRun()
        let seconds = Double((ContinuousClock.now - started) / .milliseconds(1)) / 1000
        let days = Int(((nowMs - totals.oldestMs) / 86_400_000).rounded(.up))
        print("FILLED bytes=\(used) sessions=\(totals.sessions) chunks=\(totals.chunks) samples=\(totals.samples) "
              + "unpublishedChunks=\(totals.unpublished) days=\(days) seconds=\(fixed(seconds, 1))")
    }

    /// Each user's medals over the sessions written, as the engine evaluates them, published.
    private static func writeMedals(_ sessions: [String: [SessionRecord]], store: GyroStore, calendar: PeriodCalendar,
                                    outbox: OutboxRows, after seq: Int64) async throws {
        var changes = StoreChanges()
        let renderer = DocumentRenderer()
        for (user, records) in sessions.sorted(by: { $0.key < $1.key }) {
            let medals = Medals.evaluate(records.map { ($0.localDate, calendar.weekKey(epochMs: $0.startMs), $0.durationMs) },
                                         calendar: calendar)
            changes.documents.append(DocumentWrite(path: try DocumentPaths.medals(userId: user), body: renderer.medals(medals),
                                                   retain: true, device: nil))
        }
        try await store.commit(changes)
        try await store.acknowledge(try outbox.rows(after: seq).map(\.seq))
    }
}
