import Foundation

/// Calendar periods an operator asks about.
public enum Period: String, Sendable, CaseIterable {
    case today, week, month, all
}

/// Local calendar arithmetic in the gateway's zone. Periods are computed by the calendar, not
/// by adding 24-hour days, so a day with a DST change is 23 or 25 hours long and a month ends
/// where it ends. A session belongs to the period in which it started (its `localDate`).
public struct PeriodCalendar: Sendable {
    public let calendar: Calendar

    public init(timeZone: TimeZone, firstWeekday: Int = 2) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        calendar.firstWeekday = firstWeekday
        calendar.minimumDaysInFirstWeek = 4
        self.calendar = calendar
    }

    /// `[start, end)` in epoch milliseconds of the period containing `date`.
    public func interval(of period: Period, containing date: Date) -> (startMs: Double, endMs: Double) {
        let component: Calendar.Component
        switch period {
        case .all: return (-.infinity, .infinity)
        case .today: component = .day
        case .week: component = .weekOfYear
        case .month: component = .month
        }
        guard let interval = calendar.dateInterval(of: component, for: date) else { return (-.infinity, .infinity) }
        return (interval.start.timeIntervalSince1970 * 1000, interval.end.timeIntervalSince1970 * 1000)
    }

    /// `yyyy-MM-dd` of the local day containing `epochMs`.
    public func localDate(epochMs: Double) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: epochMs / 1000))
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    /// A day number that increases by one per local calendar day (for streaks).
    public func dayNumber(localDate: String) -> Int? {
        let parts = localDate.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        // Days since 1970-01-01 in the proleptic Gregorian calendar (civil-from-days inverse).
        let y = parts[1] <= 2 ? parts[0] - 1 : parts[0]
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (parts[1] + 9) % 12
        let doy = (153 * mp + 2) / 5 + parts[2] - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// An identifier of the week containing the local day, for "sessions in one week" rules.
    public func weekKey(epochMs: Double) -> String {
        let start = interval(of: .week, containing: Date(timeIntervalSince1970: epochMs / 1000)).startMs
        return localDate(epochMs: start)
    }

    public func monthKey(localDate: String) -> String { String(localDate.prefix(7)) }
}
