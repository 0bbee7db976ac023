extension PosixTZRule {
    /// Parses `std offset [dst [offset] ,start[/time],end[/time]]` (POSIX, with RFC 8536's
    /// extensions: hours up to 167 and negative in transition times).
    /// - throws: `ZoneInfoError.invalidRule` saying where the string stops making sense.
    public init(parsing text: String) throws(ZoneInfoError) {
        var scanner = RuleScanner(bytes: Array(text.utf8), text: text)
        try scanner.designation("the standard time name")
        let standard = -(try scanner.offset("the standard offset", maxHours: 24))
        if scanner.atEnd {
            self.init(standardOffset: standard, daylight: nil)
            return
        }
        try scanner.designation("the daylight time name")
        // Without an explicit offset, daylight time is one hour ahead of standard time.
        let daylightOffset = scanner.peek == UInt8(ascii: ",") || scanner.atEnd ? standard + 3600 : -(try scanner.offset("the daylight offset", maxHours: 24))
        // POSIX leaves the default rules to the implementation; zone files always spell them out.
        guard scanner.skip(",") else { throw scanner.failure("daylight time without the rules saying when it starts and ends") }
        let start = try scanner.transition("the daylight start")
        guard scanner.skip(",") else { throw scanner.failure("expected \",\" and the daylight end after the daylight start") }
        let end = try scanner.transition("the daylight end")
        guard scanner.atEnd else { throw scanner.failure("unexpected text after the daylight end") }
        self.init(standardOffset: standard, daylight: Daylight(offset: daylightOffset, start: start, end: end))
    }
}

/// A cursor over the rule's bytes; every read checks that the bytes are there.
private struct RuleScanner {
    let bytes: [UInt8]
    let text: String
    var position = 0

    var atEnd: Bool { position >= bytes.count }
    var peek: UInt8? { atEnd ? nil : bytes[position] }

    func failure(_ problem: String) -> ZoneInfoError {
        .invalidRule(text, problem: problem + " (at character \(position + 1))")
    }

    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard peek == UInt8(ascii: character) else { return false }
        position += 1
        return true
    }

    /// `CET`, or `<-03>` / `<+0530>` for names that are not all letters; at least three characters.
    mutating func designation(_ what: String) throws(ZoneInfoError) {
        let start = position
        if skip("<") {
            while let byte = peek, byte != UInt8(ascii: ">") {
                guard isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") else {
                    throw failure("\(what) has a character other than letters, digits, + and -")
                }
                position += 1
            }
            guard skip(">") else { throw failure("\(what) starts with \"<\" but has no closing \">\"") }
            guard position - start - 2 >= 3 else { throw failure("\(what) is shorter than three characters") }
        } else {
            while let byte = peek, isLetter(byte) { position += 1 }
            guard position - start >= 3 else { throw failure("expected \(what), three or more letters") }
        }
    }

    /// `[+-]hh[:mm[:ss]]` in seconds, as written (POSIX sign: positive is west of UTC).
    mutating func offset(_ what: String, maxHours: Int) throws(ZoneInfoError) -> Int {
        var sign = 1
        if skip("-") { sign = -1 } else { _ = skip("+") }
        let hours = try number(what, maxDigits: 3)
        guard hours <= maxHours else { throw failure("\(what) has \(hours) hours, more than \(maxHours)") }
        var seconds = hours * 3600
        if skip(":") {
            let minutes = try number(what, maxDigits: 2)
            guard minutes < 60 else { throw failure("\(what) has \(minutes) minutes") }
            seconds += minutes * 60
            if skip(":") {
                let secs = try number(what, maxDigits: 2)
                guard secs < 60 else { throw failure("\(what) has \(secs) seconds") }
                seconds += secs
            }
        }
        return sign * seconds
    }

    /// `Jn`, `n` or `Mm.w.d`, then an optional `/time` (02:00 when absent).
    mutating func transition(_ what: String) throws(ZoneInfoError) -> PosixTZRule.Transition {
        let day: PosixTZRule.Transition.Day
        if skip("J") {
            let n = try number(what, maxDigits: 3)
            guard (1...365).contains(n) else { throw failure("\(what) J\(n) is not a day 1 … 365") }
            day = .julianSkippingLeapDay(n)
        } else if skip("M") {
            let month = try number(what, maxDigits: 2)
            guard (1...12).contains(month), skip(".") else { throw failure("\(what) needs a month 1 … 12 followed by \".\"") }
            let week = try number(what, maxDigits: 1)
            guard (1...5).contains(week), skip(".") else { throw failure("\(what) needs a week 1 … 5 followed by \".\"") }
            let weekday = try number(what, maxDigits: 1)
            guard (0...6).contains(weekday) else { throw failure("\(what) needs a weekday 0 … 6") }
            day = .monthWeekDay(month: month, week: week, weekday: weekday)
        } else {
            let n = try number(what, maxDigits: 3)
            guard (0...365).contains(n) else { throw failure("\(what) day \(n) is not a day 0 … 365") }
            day = .zeroBasedDayOfYear(n)
        }
        let time = skip("/") ? try offset("the time of \(what)", maxHours: 167) : 2 * 3600
        return PosixTZRule.Transition(day: day, time: time)
    }

    mutating func number(_ what: String, maxDigits: Int) throws(ZoneInfoError) -> Int {
        var value = 0, digits = 0
        while let byte = peek, isDigit(byte), digits < maxDigits {
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
            position += 1
        }
        guard digits > 0 else { throw failure("expected a number in \(what)") }
        return value
    }

    func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }
    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
