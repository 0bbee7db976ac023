/// The rules of one IANA time zone: its table of transitions (from a TZif file) and the POSIX
/// rule that continues it. Answers one question, the UTC offset at an instant; everything
/// calendrical is built on that (see `CivilDate` and `Zone.firstInstant(of:)`).
public struct Zone: Sendable, Equatable, CustomStringConvertible {
    /// `Europe/Berlin`, `UTC`, …: the name it was loaded by.
    public let identifier: String
    /// Instants (seconds since the epoch, UTC) at which the offset may change, ascending.
    let transitions: [Int]
    /// For each transition, the index in `types` of the local time from then on.
    let transitionTypes: [Int]
    /// Never empty: `types[0]` is the local time before the first transition.
    let types: [LocalTimeType]
    /// Local time after the last transition; `nil` keeps the last transition's type.
    let rule: PosixTZRule?

    struct LocalTimeType: Sendable, Equatable {
        /// Seconds east of UTC.
        let offset: Int
        let isDaylight: Bool
    }

    public var description: String { identifier }

    /// A zone with a fixed offset (seconds east of UTC) at all times.
    public init(identifier: String, fixedOffset: Int) {
        self.init(identifier: identifier, transitions: [], transitionTypes: [],
                  types: [LocalTimeType(offset: fixedOffset, isDaylight: false)], rule: nil)
    }

    init(identifier: String, transitions: [Int], transitionTypes: [Int], types: [LocalTimeType], rule: PosixTZRule?) {
        self.identifier = identifier
        self.transitions = transitions
        self.transitionTypes = transitionTypes
        self.types = types
        self.rule = rule
    }

    public static let utc = Zone(identifier: "UTC", fixedOffset: 0)

    /// Seconds east of UTC (local time minus UTC) at the instant `epochSeconds`.
    public func offset(atEpochSeconds epochSeconds: Int) -> Int {
        localTimeType(atEpochSeconds: epochSeconds).offset
    }

    /// Whether daylight saving time is in force at `epochSeconds`.
    public func isDaylightSavingTime(atEpochSeconds epochSeconds: Int) -> Bool {
        localTimeType(atEpochSeconds: epochSeconds).isDaylight
    }

    func localTimeType(atEpochSeconds epochSeconds: Int) -> LocalTimeType {
        guard let last = transitions.last, let first = transitions.first else {
            // No table: a rule-only file (or UTC) follows its rule at all times.
            if let rule { return rule.localTimeType(atEpochSeconds: epochSeconds) }
            return types[0]
        }
        if epochSeconds < first { return types[0] }
        if epochSeconds >= last, let rule { return rule.localTimeType(atEpochSeconds: epochSeconds) }
        // The last transition at or before the instant.
        var low = 0, high = transitions.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if transitions[middle] <= epochSeconds { low = middle } else { high = middle - 1 }
        }
        return types[transitionTypes[low]]
    }
}

extension PosixTZRule {
    func localTimeType(atEpochSeconds epochSeconds: Int) -> Zone.LocalTimeType {
        let (seconds, isDaylight) = offset(atEpochSeconds: epochSeconds)
        return Zone.LocalTimeType(offset: seconds, isDaylight: isDaylight)
    }
}
