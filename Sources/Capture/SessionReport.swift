import FoundationEssentials
import GyroStore

/// Sessions of a calendar period with their totals, as the operator's views show them.
public struct SessionReport: Sendable {
    public var period: Period
    public var fromMs: Double?
    public var toMs: Double?
    public var sessions: [SessionRecord]

    public var count: Int { sessions.count }
    public var durationMs: Double { sessions.reduce(0) { $0 + $1.durationMs } }
    public var samples: Int64 { sessions.reduce(0) { $0 + $1.samples } }

    /// Sessions that started in the period containing `now`, in the calendar's zone.
    public static func load(from store: GyroStore, period: Period, userId: String? = nil, calendar: PeriodCalendar,
                            now: Date = Date()) async throws -> SessionReport {
        let (from, to) = calendar.interval(of: period, containing: now)
        let sessions = try await store.sessions(startingFrom: from, before: to, userId: userId, chunkLists: false)
        return SessionReport(period: period, fromMs: from.isFinite ? from : nil, toMs: to.isFinite ? to : nil, sessions: sessions)
    }
}
