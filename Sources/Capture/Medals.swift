/// The medals and trophies of one user: booleans, as the apps' `MedalsAndTrophies` object.
///
/// Rules, from the user's closed sessions (local calendar days in the gateway's zone):
/// - `firstSession`: at least one session.
/// - `tenSessions`, `fiftySessions`, `hundredSessions`: 10, 50, 100 sessions.
/// - `threeDayStreak`, `sevenDayStreak`, `thirtyDayStreak`: sessions on 3, 7, 30 consecutive local days.
/// - `tenMinuteSession`, `thirtyMinuteSession`, `hourSession`: one session of at least 10, 30, 60 minutes.
/// - `fiveSessionsInAWeek`: 5 sessions started in one calendar week.
/// - `tenHoursInAMonth`: 10 hours of sessions started in one calendar month.
/// Medals are monotonic: once earned, never taken back, even if sessions are deleted.
public struct Medals: Sendable, Equatable {
    public static let names = [
        "firstSession", "tenSessions", "fiftySessions", "hundredSessions",
        "threeDayStreak", "sevenDayStreak", "thirtyDayStreak",
        "tenMinuteSession", "thirtyMinuteSession", "hourSession",
        "fiveSessionsInAWeek", "tenHoursInAMonth",
    ]

    public private(set) var earned: Set<String>

    public init(earned: Set<String> = []) { self.earned = earned.intersection(Self.names) }

    public subscript(name: String) -> Bool { earned.contains(name) }

    /// This set plus everything `other` earned.
    public func union(_ other: Medals) -> Medals { Medals(earned: earned.union(other.earned)) }

    /// Evaluates the rules over a user's sessions: `(localDate, weekKey, durationMs)` each.
    public static func evaluate(_ sessions: [(localDate: String, weekKey: String, durationMs: Double)], calendar: PeriodCalendar) -> Medals {
        var earned: Set<String> = []
        let count = sessions.count
        if count >= 1 { earned.insert("firstSession") }
        if count >= 10 { earned.insert("tenSessions") }
        if count >= 50 { earned.insert("fiftySessions") }
        if count >= 100 { earned.insert("hundredSessions") }

        let days = Set(sessions.compactMap { calendar.dayNumber(localDate: $0.localDate) }).sorted()
        var longest = 0, run = 0, previous: Int?
        for day in days {
            run = (previous.map { day == $0 + 1 } ?? false) ? run + 1 : 1
            longest = max(longest, run)
            previous = day
        }
        if longest >= 3 { earned.insert("threeDayStreak") }
        if longest >= 7 { earned.insert("sevenDayStreak") }
        if longest >= 30 { earned.insert("thirtyDayStreak") }

        let longestSession = sessions.map(\.durationMs).max() ?? 0
        if longestSession >= 10 * 60_000 { earned.insert("tenMinuteSession") }
        if longestSession >= 30 * 60_000 { earned.insert("thirtyMinuteSession") }
        if longestSession >= 60 * 60_000 { earned.insert("hourSession") }

        if Dictionary(grouping: sessions, by: \.weekKey).values.contains(where: { $0.count >= 5 }) { earned.insert("fiveSessionsInAWeek") }
        let monthly = Dictionary(grouping: sessions, by: { calendar.monthKey(localDate: $0.localDate) }).values
            .map { $0.reduce(0) { $0 + $1.durationMs } }
        if monthly.contains(where: { $0 >= 10 * 3_600_000 }) { earned.insert("tenHoursInAMonth") }
        return Medals(earned: earned)
    }
}
