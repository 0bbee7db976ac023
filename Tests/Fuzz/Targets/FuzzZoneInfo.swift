// Fuzz target "zoneinfo": the whole input as a TZif file (`Zone(tzif:)`) and as a POSIX TZ rule
// (`PosixTZRule(parsing:)`, the TZif footer).
//
// Property: each returns a value or throws `ZoneInfoError` with a message; it never traps. A zone
// or rule it returns answers offsets within RFC 8536's -25 h … +26 h at instants from before
// 1900 to after 2100 and at the table's edges, and the first instant of a local day reads as
// that day (or the next, for a day the clocks skip entirely) while the instant before reads an
// earlier day.

import ZoneInfo

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzZoneInfo(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput(data, size).bytes
    let instants = [Int(Int32.min), -2_208_988_800, -1, 0, 1_795_721_278, Int(Int32.max), 4_102_444_800, 32_503_680_000]
    do {
        let zone = try Zone(tzif: bytes, identifier: "fuzz", source: "fuzz")
        for instant in instants {
            let offset = zone.offset(atEpochSeconds: instant)
            fuzzCheck((-90_000...93_600).contains(offset), "offset \(offset) at \(instant)")
            let day = zone.localDate(atEpochSeconds: instant)
            let start = zone.firstInstant(of: day)
            let startDay = zone.localDate(atEpochSeconds: start)
            fuzzCheck(startDay == day || startDay == day.adding(days: 1), "first instant of \(day) reads \(startDay)")
            fuzzCheck(zone.localDate(atEpochSeconds: start - 1) < day, "the instant before the first of \(day) reads that day")
        }
    } catch {
        fuzzCheck(!error.description.isEmpty, "error without a message")
    }
    do {
        let rule = try PosixTZRule(parsing: String(decoding: bytes, as: UTF8.self))
        for instant in instants {
            let offset = rule.offset(atEpochSeconds: instant).seconds
            fuzzCheck((-90_000...93_600).contains(offset), "rule offset \(offset) at \(instant)")
        }
    } catch {
        fuzzCheck(!error.description.isEmpty, "error without a message")
    }
    return 0
}
