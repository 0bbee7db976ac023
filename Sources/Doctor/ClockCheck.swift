import FoundationEssentials
import ZoneInfo

/// The clock is plausible and synchronised: a Pi without an RTC starts in 1970, or from what
/// fake-hwclock saved, until NTP has synchronised it. The gateway runs meanwhile (it re-dates
/// what it records, or a board dates it), but the operator should know, and give it a source.
enum ClockCheck {
    static let earliestPlausibleYear = 2024

    /// `synchronised`: what adjtimex said, `nil` when it could not be asked.
    static func run(now: Date, synchronised: Bool? = true) -> CheckResult {
        // Bounded so that no Date, however absurd, traps the conversion to Int.
        let days = min(max((now.timeIntervalSince1970 / 86_400).rounded(.down), -1e9), 1e9)
        guard CivilDate(daysSinceEpoch: Int(days)).year >= earliestPlausibleYear else {
            return .problem("clock", .clockImplausible(now: now))
        }
        guard synchronised != false else { return .problem("clock", .clockUnsynchronised(now: now)) }
        return .ok("clock", "\(now.iso8601UTC) (UTC), " + (synchronised == nil ? "synchronisation unknown" : "synchronised"))
    }
}
