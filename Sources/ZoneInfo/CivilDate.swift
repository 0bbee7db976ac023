/// A day of the proleptic Gregorian calendar, without a zone: what a local date *is* once the
/// zone's offset has been applied. Converts to and from days since 1970-01-01 exactly, for any
/// year, by counting in 400-year eras (each is exactly 146,097 days).
public struct CivilDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    /// 1 … 12
    public let month: Int
    /// 1 … 31
    public let day: Int

    /// `nil` when the month or the day does not exist (2026-02-29, 2026-13-01).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= CivilDate.daysIn(month: month, year: year) else { return nil }
        (self.year, self.month, self.day) = (year, month, day)
    }

    public init(daysSinceEpoch days: Int) {
        // Shifted so that years start on March 1: the leap day is then the last day of a year.
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let marchMonth = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * marchMonth + 2) / 5 + 1
        month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// Parses `yyyy-MM-dd` (as `description` writes it for years 0 … 9999); `nil` for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { (0x30...0x39).contains($0) } }),
              let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]) else { return nil }
        self.init(year: year, month: month, day: day)
    }

    public var daysSinceEpoch: Int {
        let marchYear = month <= 2 ? year - 1 : year
        let era = (marchYear >= 0 ? marchYear : marchYear - 399) / 400
        let yearOfEra = marchYear - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// 1 = Sunday … 7 = Saturday, the numbering of the configuration's `firstWeekday`.
    public var weekday: Int { CivilDate.weekday(daysSinceEpoch: daysSinceEpoch) }

    /// 1970-01-01 was a Thursday (5 in this numbering).
    public static func weekday(daysSinceEpoch days: Int) -> Int {
        ((days + 4) % 7 + 7) % 7 + 1
    }

    public func adding(days: Int) -> CivilDate { CivilDate(daysSinceEpoch: daysSinceEpoch + days) }

    /// The first day of this date's month.
    public var firstOfMonth: CivilDate { CivilDate(uncheckedYear: year, month: month, day: 1) }

    /// The first day of the following month.
    public var firstOfNextMonth: CivilDate {
        month == 12 ? CivilDate(uncheckedYear: year + 1, month: 1, day: 1) : CivilDate(uncheckedYear: year, month: month + 1, day: 1)
    }

    /// `yyyy-MM-dd`, with a `-` before negative years.
    public var description: String {
        (year < 0 ? "-" : "") + zeroPadded(abs(year), width: 4) + "-" + zeroPadded(month, width: 2) + "-" + zeroPadded(day, width: 2)
    }

    public static func < (lhs: CivilDate, rhs: CivilDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    public static func isLeap(year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year: year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    init(uncheckedYear year: Int, month: Int, day: Int) { (self.year, self.month, self.day) = (year, month, day) }
}

/// Floor division: local days and years must not round towards zero before 1970.
func floorDivide(_ value: Int, _ divisor: Int) -> Int {
    let quotient = value / divisor
    return (value % divisor != 0 && (value < 0) != (divisor < 0)) ? quotient - 1 : quotient
}
