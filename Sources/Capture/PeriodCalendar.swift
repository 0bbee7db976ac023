import FoundationEssentials
import ZoneInfo

/// Calendar periods an operator asks about.
public enum Period: String, Sendable, CaseIterable {
    case today, week, month, all
}

/// Local calendar arithmetic in the gateway's zone. Periods run from the first instant of one
/// local day to the first instant of another, never by adding 24-hour days, so a day with a DST
/// change is 23 or 25 hours long and a month ends where it ends. A session belongs to the period
/// in which it started (its `localDate`).
public struct PeriodCalendar: Sendable {
    public let timeZone: Zone
    /// 1 = Sunday … 7 = Saturday; weeks start on this day (the configuration's `firstWeekday`).
    public let firstWeekday: Int

    public init(timeZone: Zone, firstWeekday: Int = 2) {
        self.timeZone = timeZone
        self.firstWeekday = (1...7).contains(firstWeekday) ? firstWeekday : 2
    }

    /// `[start, end)` in epoch milliseconds of the period containing `date`.
    public func interval(of period: Period, containing date: Date) -> (startMs: Double, endMs: Double) {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds.isFinite, abs(seconds) < 1e15 else { return (-.infinity, .infinity) }
        let day = timeZone.localDate(atEpochSeconds: Int(seconds))
        let first: CivilDate, next: CivilDate
        switch period {
        case .all: return (-.infinity, .infinity)
        case .today: (first, next) = (day, day.adding(days: 1))
        case .week:
            first = day.adding(days: -((day.weekday - firstWeekday + 7) % 7))
            next = first.adding(days: 7)
        case .month: (first, next) = (day.firstOfMonth, day.firstOfNextMonth)
        }
        return (Double(timeZone.firstInstant(of: first)) * 1000, Double(timeZone.firstInstant(of: next)) * 1000)
    }

    /// `yyyy-MM-dd` of the local day containing `epochMs`.
    public func localDate(epochMs: Double) -> String {
        let seconds = (epochMs / 1000).rounded(.down)
        guard seconds.isFinite, abs(seconds) < 1e15 else { return "0000-00-00" }
        return timeZone.localDate(atEpochSeconds: Int(seconds)).description
    }

    /// The first instant of the local day `localDate` (`yyyy-MM-dd`), in epoch milliseconds.
    public func startMs(localDate: String) -> Double? {
        CivilDate(localDate).map { Double(timeZone.firstInstant(of: $0)) * 1000 }
    }

    /// A day number that increases by one per local calendar day (for streaks): days since
    /// 1970-01-01 in the proleptic Gregorian calendar.
    public func dayNumber(localDate: String) -> Int? {
        CivilDate(localDate)?.daysSinceEpoch
    }

    /// An identifier of the week containing the local day, for "sessions in one week" rules.
    public func weekKey(epochMs: Double) -> String {
        let start = interval(of: .week, containing: Date(timeIntervalSince1970: epochMs / 1000)).startMs
        return localDate(epochMs: start)
    }

    public func monthKey(localDate: String) -> String { String(localDate.prefix(7)) }
}
