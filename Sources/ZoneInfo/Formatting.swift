/// `value` in decimal with leading zeros up to `width` digits (`String(format: "%02d")` is not
/// in FoundationEssentials). Negative values keep their sign in front of the zeros.
public func zeroPadded(_ value: Int, width: Int) -> String {
    let digits = String(value.magnitude)
    let padding = String(repeating: "0", count: max(0, width - digits.count))
    return (value < 0 ? "-" : "") + padding + digits
}

/// `2026-11-26T19:27:58Z`: an instant in UTC to the second, as `ISO8601DateFormatter` wrote it
/// by default. Fractions of a second are dropped (floored), never rounded up into the next second.
public func iso8601UTC(epochSeconds: Int) -> String {
    let days = floorDivide(epochSeconds, 86_400)
    let secondOfDay = epochSeconds - days * 86_400
    return CivilDate(daysSinceEpoch: days).description + "T" + zeroPadded(secondOfDay / 3600, width: 2) + ":"
        + zeroPadded(secondOfDay / 60 % 60, width: 2) + ":" + zeroPadded(secondOfDay % 60, width: 2) + "Z"
}
