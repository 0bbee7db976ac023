import FoundationEssentials
import Glibc
import GyroStore

extension AdminAPI {
    /// Prometheus text exposition (format 0.0.4), written by hand: `gyrogate_` prefix, base
    /// units (bytes, seconds), `_total` for counters.
    func metrics() async throws -> AdminResponse {
        let counters = await engine.counters
        let open = await engine.openSessions()
        let outbox = try await store.outboxStats()
        let used = try await store.usedBytes()
        let evicted = try await store.counter(GyroStore.evictedCounter)
        let pruned = try await store.counter(GyroStore.prunedCounter)
        let expected = open.reduce(Int64(0)) { $0 + $1.expected }
        var text = PrometheusText()
        text.add("samples_received_total", .counter, "Samples committed to the store.", counters.committedSamples)
        text.add("samples_expected", .gauge, "Samples the open sessions should have received (stored plus missing).", expected)
        text.add("samples_missing_total", .counter, "Samples recorded as missing in gaps.", counters.missingSamples)
        text.add("samples_duplicate_total", .counter, "Samples dropped because their index was already stored.", counters.duplicateSamples)
        text.add("samples_without_session_total", .counter, "Samples dropped because their sensor had no session.", counters.samplesWithoutSession)
        text.add("gaps_total", .counter, "Gaps recorded (runs of missing samples).", counters.gaps)
        text.add("open_session_gaps", .gauge, "Gaps in the open sessions.", open.reduce(0) { $0 + $1.gaps.count })
        text.add("commits_total", .counter, "Store transactions committed by capture.", counters.commits)
        text.add("commits_failed_total", .counter, "Store transactions that failed (retried).", counters.failedCommits)
        text.add("chunks_closed_total", .counter, "Chunks closed into documents.", counters.chunksClosed)
        text.add("sessions_started_total", .counter, "Sessions started.", counters.sessionsStarted)
        text.add("sessions_closed_total", .counter, "Sessions closed.", counters.sessionsClosed)
        text.add("sessions_withdrawn_total", .counter, "Sessions found open after a crash without a sample, and withdrawn.", counters.sessionsWithdrawn)
        text.add("sessions_open", .gauge, "Sessions open now.", open.count)
        text.add("outbox_depth", .gauge, "Outbox rows not yet acknowledged by the broker.", outbox.depth)
        text.add("outbox_bytes", .gauge, "Payload bytes the outbox holds, as stored (chunk documents compact).", outbox.bytes)
        text.add("outbox_parked", .gauge, "Outbox rows the broker refused repeatedly, kept but not sent until a resync.", outbox.parked)
        text.add("outbox_oldest_age_seconds", .gauge, "Age of the oldest outbox row.",
                 outbox.oldestCreatedAt.map { max(0, Date().timeIntervalSince1970 - $0) } ?? 0)
        text.add("store_bytes", .gauge, "Bytes used by the store's live pages.", used)
        text.add("store_limit_bytes", .gauge, "retention.maxStoreBytes.", store.maxBytes)
        text.add("store_evicted_unpublished_chunks_total", .counter, "Unpublished chunks evicted to stay under the limit.", evicted)
        text.add("store_pruned_chunks_total", .counter, "Published chunks pruned by retention.", pruned)
        let condition = await engine.storeCondition
        text.add("store_full", .gauge, "1 while the disk of the data directory is full: a commit failed for want of space, or retention evicts "
                 + "unpublished data because the disk has no room (see the status's store.state).", condition.isFull ? 1 : 0)
        text.add("store_at_limit", .gauge, "1 while retention evicts unpublished data to stay under retention.maxStoreBytes (the disk has room).",
                 condition.isAtLimit ? 1 : 0)
        text.add("store_damaged", .gauge, "1 once SQLite has found the store file damaged: it takes no more writes, and the gateway stops.",
                 store.integrity.isDamaged ? 1 : 0)
        let verified: Int = if case .verified = store.integrity { 1 } else { 0 }
        text.add("store_integrity_verified", .gauge, "1 once the full integrity check in the background found the store file sound.", verified)
        text.add("store_full_episodes_total", .counter, "Times the disk of the data directory filled up (the store entered the full state).",
                 counters.storeFullEpisodes)
        text.add("store_full_samples_total", .counter, "Samples not kept because the disk was full (storeFull gaps).", counters.storeFullSamples)
        let limit = try? await store.workingLimit()
        if let space = store.space() {
            text.add("store_disk_free_bytes", .gauge, "Free bytes on the data directory's filesystem.", space.freeBytes)
            text.add("store_reserve_held_bytes", .gauge, "Bytes the store's reserve file holds (0 while released for a full disk).", space.reserveHeldBytes)
        }
        if let room = limit?.diskRoomBytes {
            text.add("store_disk_room_bytes", .gauge, "What the store's file may still grow by: free bytes plus the reserve's, less the reserve's size.", room)
        }
        if let written = store.writes?.written() {
            text.add("store_written_bytes_total", .counter, "Bytes the gateway wrote to storage since the store opened (/proc/self/io write_bytes).", written)
        }
        if let perDay = store.writes?.perDay() {
            text.add("store_written_bytes_per_day", .gauge, "store_written_bytes_total at its rate since the store opened, per day.", perDay.rounded())
        }
        text.add("store_working_limit_bytes", .gauge, "What retention keeps the store under: the limit, or less when the disk has less room.",
                 limit?.bytes ?? store.maxBytes)
        await addClockMetrics(to: &text)
        text.add("uptime_seconds", .gauge, "Seconds since the admin API started.", (ContinuousClock.now - started).seconds)
        if let rss = ProcessMemory.residentBytes() {
            text.add("process_resident_memory_bytes", .gauge, "Resident set size, from /proc/self/statm.", rss)
        }
        return AdminResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8", body: Array(text.output.utf8))
    }
}

/// Builds the exposition text: `# HELP`, `# TYPE` and one sample per metric.
struct PrometheusText {
    enum Kind: String { case counter, gauge }
    private(set) var output = ""

    mutating func add(_ name: String, _ kind: Kind, _ help: String, _ value: some BinaryInteger) {
        add(name, kind, help, rendered: String(value))
    }

    mutating func add(_ name: String, _ kind: Kind, _ help: String, _ value: Double) {
        add(name, kind, help, rendered: value.isFinite ? String(value) : "NaN")
    }

    private mutating func add(_ name: String, _ kind: Kind, _ help: String, rendered: String) {
        let full = "gyrogate_\(name)"
        output += "# HELP \(full) \(help)\n# TYPE \(full) \(kind.rawValue)\n\(full) \(rendered)\n"
    }
}

enum ProcessMemory {
    /// Resident pages × page size, from the second field of `/proc/self/statm`.
    static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
