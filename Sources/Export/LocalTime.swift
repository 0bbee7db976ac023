import ZoneInfo

/// MetaBase's local time column, `2019-11-14T09:25:05.113`, at one fixed offset: the file's
/// header names one offset (`time (-08:00)`), so every row is written at the offset of the
/// session's start, also across a change to or from daylight saving time within it.
struct LocalTime {
    let offsetSeconds: Int
    private var day = Int.min
    private var datePrefix: [UInt8] = []

    init(offsetSeconds: Int) { self.offsetSeconds = offsetSeconds }

    /// The offset as MetaBase's header writes it: `-08:00`, `+01:00`, `+00:00`.
    static func offsetText(_ seconds: Int) -> String {
        let minutes = abs(seconds) / 60
        return (seconds < 0 ? "-" : "+") + zeroPadded(minutes / 60, width: 2) + ":" + zeroPadded(minutes % 60, width: 2)
    }

    /// Appends the local time of `micros` (epoch microseconds), truncated to the millisecond.
    mutating func append(micros: Int64, to out: inout [UInt8]) {
        let ms = Int(micros.floorDivided(by: 1000)) + offsetSeconds * 1000
        let days = ms.floorDivided(by: 86_400_000)
        if days != day {
            day = days
            let date = CivilDate(daysSinceEpoch: days)
            datePrefix = []
            datePrefix.appendDigits(UInt64(max(0, date.year)), width: 4)
            datePrefix.append(UInt8(ascii: "-"))
            datePrefix.appendDigits(UInt64(date.month), width: 2)
            datePrefix.append(UInt8(ascii: "-"))
            datePrefix.appendDigits(UInt64(date.day), width: 2)
            datePrefix.append(UInt8(ascii: "T"))
        }
        let inDay = ms - days * 86_400_000
        out.append(contentsOf: datePrefix)
        out.appendDigits(UInt64(inDay / 3_600_000), width: 2)
        out.append(UInt8(ascii: ":"))
        out.appendDigits(UInt64(inDay / 60_000 % 60), width: 2)
        out.append(UInt8(ascii: ":"))
        out.appendDigits(UInt64(inDay / 1000 % 60), width: 2)
        out.append(UInt8(ascii: "."))
        out.appendDigits(UInt64(inDay % 1000), width: 3)
    }

    /// MetaBase's start in file names, `2019-11-14T09.25.05.113` (no `:`, which some
    /// filesystems refuse).
    func fileStamp(micros: Int64) -> String {
        var copy = self
        var bytes: [UInt8] = []
        copy.append(micros: micros, to: &bytes)
        return String(decoding: bytes.map { $0 == UInt8(ascii: ":") ? UInt8(ascii: ".") : $0 }, as: UTF8.self)
    }
}

extension BinaryInteger {
    /// Division rounding toward minus infinity (times before 1970 stay in their day).
    func floorDivided(by divisor: Self) -> Self {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
