extension Zone {
    /// The local calendar day containing the instant.
    public func localDate(atEpochSeconds epochSeconds: Int) -> CivilDate {
        CivilDate(daysSinceEpoch: floorDivide(epochSeconds + offset(atEpochSeconds: epochSeconds), 86_400))
    }

    /// The first instant (epoch seconds) of the local day `date`: its midnight, or, where the
    /// clocks skip midnight (a change at 00:00 forward, as Santiago and Beirut have had), the
    /// instant of that change, when the day starts at 01:00. Where midnight happens twice (a
    /// change back at 01:00 to 00:00), the first. In general: the first instant whose local
    /// time is at or past the day's midnight. From one first instant to the next, a day is as long
    /// as the clocks make it: 23 or 25 hours on a DST change day.
    public func firstInstant(of date: CivilDate) -> Int {
        let midnight = date.daysSinceEpoch * 86_400
        // Offsets lie within -25 h … +26 h, so the day starts within 27 hours of midnight UTC.
        let from = midnight - 27 * 3600
        let starts = [from] + changeInstants(after: from, through: midnight + 27 * 3600)
        // Local time rises steadily between changes: in each stretch, the first instant at or
        // past local midnight, if the stretch has one. The first such instant is the day's.
        for (index, start) in starts.enumerated() {
            let candidate = max(start, midnight - offset(atEpochSeconds: start))
            if index + 1 == starts.count || candidate < starts[index + 1] { return candidate }
        }
        return midnight
    }

    /// The instants in `(from, through]` at which the offset may change: the table's transitions
    /// and, after the table, the rule's.
    func changeInstants(after from: Int, through end: Int) -> [Int] {
        var instants = transitions.filter { $0 > from && $0 <= end }
        if let rule {
            let tableEnd = transitions.last ?? Int.min
            let firstYear = CivilDate(daysSinceEpoch: floorDivide(from, 86_400)).year - 1
            let lastYear = CivilDate(daysSinceEpoch: floorDivide(end, 86_400)).year + 1
            for year in firstYear...lastYear {
                instants += rule.changes(year: year).map(\.at).filter { $0 > max(from, tableEnd) && $0 <= end }
            }
        }
        return Set(instants).sorted()
    }
}
