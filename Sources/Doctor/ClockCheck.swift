import FoundationEssentials
import ZoneInfo

/// The clock is plausible: a Pi without an RTC starts in 1970 until NTP has synchronised, and
/// sessions stamped then would be filed under the wrong days.
enum ClockCheck {
    static let earliestPlausibleYear = 2024

    static func run(now: Date) -> CheckResult {
        // Bounded so that no Date, however absurd, traps the conversion to Int.
        let days = min(max((now.timeIntervalSince1970 / 86_400).rounded(.down), -1e9), 1e9)
        guard CivilDate(daysSinceEpoch: Int(days)).year >= earliestPlausibleYear else {
            return .problem("clock", .clockImplausible(now: now))
        }
        return .ok("clock", "\(now.iso8601UTC) (UTC)")
    }
}
