import Foundation

/// The clock is plausible: a Pi without an RTC starts in 1970 until NTP has synchronised, and
/// sessions stamped then would be filed under the wrong days.
enum ClockCheck {
    static let earliestPlausibleYear = 2024

    static func run(now: Date) -> CheckResult {
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC") ?? utc.timeZone
        guard utc.component(.year, from: now) >= earliestPlausibleYear else {
            return .problem("clock", .clockImplausible(now: now))
        }
        return .ok("clock", "\(now.formatted(.iso8601)) (UTC)")
    }
}
