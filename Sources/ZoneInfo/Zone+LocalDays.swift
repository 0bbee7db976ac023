extension Zone {
    /// The local calendar day containing the instant.
    public func localDate(atEpochSeconds epochSeconds: Int) -> CivilDate {
        CivilDate(daysSinceEpoch: floorDivide(epochSeconds + offset(atEpochSeconds: epochSeconds), 86_400))
    }

    /// The first instant (epoch seconds) of the local day `date`: its midnight, or, where the
    /// clocks skip midnight (a change at 00:00 forward, as Santiago and Beirut have had), the
    /// instant of that change, when the day starts at 01:00. Where midnight happens twice (a
    /// change back at 01:00 to 00:00), the first. Days are therefore 23, 24 or 25 hours long
    /// when measured from one first instant to the next.
    public func firstInstant(of date: CivilDate) -> Int {
        let midnight = date.daysSinceEpoch * 86_400
        // Every offset in force within a day and a bit of local midnight; no zone changes more
        // often than that.
        var offsets: Set<Int> = []
        for step in -9...9 { offsets.insert(offset(atEpochSeconds: midnight + step * 3 * 3600)) }
        // Instants that read exactly midnight on the local clock.
        let exact = offsets.map { midnight - $0 }.filter { $0 + offset(atEpochSeconds: $0) == midnight }
        if let first = exact.min() { return first }
        // Midnight was skipped: the day begins at the change, the first instant whose local
        // time is past midnight. Local time only moves forward across that gap.
        var low = midnight - (offsets.max() ?? 0), high = midnight - (offsets.min() ?? 0)
        while low < high {
            let middle = low + (high - low) / 2
            if middle + offset(atEpochSeconds: middle) >= midnight { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
