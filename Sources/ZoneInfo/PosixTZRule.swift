/// The rule a TZif footer gives for instants after the file's last transition: a POSIX `TZ`
/// string with RFC 8536's extensions, for example `CET-1CEST,M3.5.0,M10.5.0/3` or
/// `<-03>3` or `AEST-10AEDT,M10.1.0,M4.1.0/3` (daylight time across the new year).
///
/// POSIX writes offsets west of UTC (`CET-1` is one hour *ahead*); this type stores them east
/// of UTC, like the TZif table and `Zone.offset(atEpochSeconds:)`.
public struct PosixTZRule: Sendable, Equatable {
    public let standardOffset: Int
    public let daylight: Daylight?

    public struct Daylight: Sendable, Equatable {
        public let offset: Int
        /// When daylight time starts, in local standard time.
        public let start: Transition
        /// When it ends, in local daylight time.
        public let end: Transition
    }

    public struct Transition: Sendable, Equatable {
        public enum Day: Sendable, Equatable {
            /// `Jn`: 1 … 365, February 29 never counted (J60 is always March 1).
            case julianSkippingLeapDay(Int)
            /// `n`: 0 … 365, February 29 counted.
            case zeroBasedDayOfYear(Int)
            /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (5 = the last) of month `m`.
            case monthWeekDay(month: Int, week: Int, weekday: Int)
        }
        public let day: Day
        /// Seconds after local midnight of that day; RFC 8536 allows -167 … 167 hours.
        public let time: Int

        /// The day, as days since 1970-01-01, on which this transition falls in `year`.
        func daysSinceEpoch(year: Int) -> Int {
            let january1 = CivilDate(uncheckedYear: year, month: 1, day: 1).daysSinceEpoch
            switch day {
            case .julianSkippingLeapDay(let n):
                return january1 + n - 1 + (CivilDate.isLeap(year: year) && n >= 60 ? 1 : 0)
            case .zeroBasedDayOfYear(let n):
                return january1 + n
            case .monthWeekDay(let month, let week, let weekday):
                let first = CivilDate(uncheckedYear: year, month: month, day: 1).daysSinceEpoch
                let firstMatching = first + (weekday - (CivilDate.weekday(daysSinceEpoch: first) - 1) + 7) % 7
                var candidate = firstMatching + 7 * (week - 1)
                // Week 5 means the last such weekday, which may be the fourth.
                while candidate - first >= CivilDate.daysIn(month: month, year: year) { candidate -= 7 }
                return candidate
            }
        }
    }

    /// A zone without daylight time.
    public init(standardOffset: Int) {
        self.standardOffset = standardOffset
        daylight = nil
    }

    init(standardOffset: Int, daylight: Daylight?) {
        self.standardOffset = standardOffset
        self.daylight = daylight
    }

    /// Seconds east of UTC at `epochSeconds`, and whether that is daylight time.
    public func offset(atEpochSeconds epochSeconds: Int) -> (seconds: Int, isDaylight: Bool) {
        guard let daylight else { return (standardOffset, false) }
        let year = CivilDate(daysSinceEpoch: floorDivide(epochSeconds + standardOffset, 86_400)).year
        // The changes of the neighbouring years as well: with times up to 167 hours, or a
        // southern zone whose daylight time spans the new year, the one in force may be last year's.
        var latest: (at: Int, isDaylight: Bool)?
        for candidateYear in year - 1...year + 1 {
            for change in changes(year: candidateYear) where change.at <= epochSeconds {
                // At equal instants (daylight time all year: one year's end is the next one's
                // start) daylight time wins.
                if let current = latest, (current.at, current.isDaylight ? 1 : 0) > (change.at, change.isDaylight ? 1 : 0) { continue }
                latest = change
            }
        }
        let isDaylight = latest?.isDaylight ?? false
        return (isDaylight ? daylight.offset : standardOffset, isDaylight)
    }

    /// The instants (epoch seconds) at which daylight time ends and starts in `year`.
    func changes(year: Int) -> [(at: Int, isDaylight: Bool)] {
        guard let daylight else { return [] }
        return [(daylight.end.daysSinceEpoch(year: year) * 86_400 + daylight.end.time - daylight.offset, false),
                (daylight.start.daysSinceEpoch(year: year) * 86_400 + daylight.start.time - standardOffset, true)]
    }
}
