extension Zone {
    /// Parses a TZif file (RFC 8536, versions 1 to 4). Version 2+ files are read from their
    /// 64-bit block and footer; the 32-bit block is only skipped. Every count is checked against
    /// the bytes that remain before anything is read, so a truncated or lying file is an error,
    /// never a trap. Leap-second records are skipped: civil time in the zoneinfo files the
    /// system uses ("posix", not "right") does not count them.
    /// - parameter bytes: the file's contents.
    /// - parameter identifier: the zone's IANA name (`Europe/Zurich`).
    /// - parameter source: the file, for the error messages.
    public init(tzif bytes: [UInt8], identifier: String, source: String) throws(ZoneInfoError) {
        var reader = TZifReader(bytes: bytes, source: source)
        let header = try reader.header()
        var block = header
        if header.version >= 2 {
            try reader.skip(header.dataSize(timeSize: 4), "the version 1 data block")
            block = try reader.header()
        }
        let timeSize = header.version >= 2 ? 8 : 4
        let needed = block.dataSize(timeSize: timeSize)
        guard reader.remaining >= needed else {
            throw reader.failure("its header counts \(block.timeCount) transitions, \(block.typeCount) local time types, \(block.charCount) "
                                 + "designation bytes and \(block.leapCount) leap seconds (\(needed) bytes), but only \(reader.remaining) bytes follow")
        }
        var transitions: [Int] = []
        transitions.reserveCapacity(block.timeCount)
        for index in 0..<block.timeCount {
            let time = try timeSize == 8 ? reader.int64() : reader.int32()
            if let previous = transitions.last, time <= previous {
                throw reader.failure("transition \(index) (\(time)) is not after transition \(index - 1) (\(previous))")
            }
            transitions.append(time)
        }
        var transitionTypes: [Int] = []
        transitionTypes.reserveCapacity(block.timeCount)
        for index in 0..<block.timeCount {
            let type = Int(try reader.uint8())
            guard type < block.typeCount else {
                throw reader.failure("transition \(index) uses local time type \(type), but there are only \(block.typeCount)")
            }
            transitionTypes.append(type)
        }
        var types: [LocalTimeType] = []
        for index in 0..<block.typeCount {
            let offset = try reader.int32()
            let isDaylight = try reader.uint8()
            let designation = Int(try reader.uint8())
            // RFC 8536: offsets within -25 h … +26 h exclusive; beyond, the table is garbage.
            guard (-89_999...93_599).contains(offset) else { throw reader.failure("local time type \(index) has a UTC offset of \(offset) s") }
            guard isDaylight <= 1 else { throw reader.failure("local time type \(index) has a daylight flag of \(isDaylight), not 0 or 1") }
            guard designation < block.charCount else {
                throw reader.failure("local time type \(index) names designation byte \(designation), but there are only \(block.charCount)")
            }
            types.append(LocalTimeType(offset: offset, isDaylight: isDaylight == 1))
        }
        try reader.skip(block.charCount + block.leapCount * (timeSize + 4) + block.standardCount + block.utcCount, "the designations and flags")
        var rule: PosixTZRule?
        if header.version >= 2 {
            let footer = try reader.footer()
            if !footer.isEmpty {
                do { rule = try PosixTZRule(parsing: footer) } catch { throw reader.failure("its footer: \(error)") }
            }
        }
        self.init(identifier: identifier, transitions: transitions, transitionTypes: transitionTypes, types: types, rule: rule)
    }
}

/// The six counts of a TZif header.
struct TZifHeader {
    /// 1 for a version 1 file (whose version byte is NUL), else the digit.
    let version: Int
    let utcCount, standardCount, leapCount, timeCount, typeCount, charCount: Int

    func dataSize(timeSize: Int) -> Int {
        timeCount * timeSize + timeCount + typeCount * 6 + charCount + leapCount * (timeSize + 4) + standardCount + utcCount
    }
}

/// Big-endian reads that check the bytes are there first.
struct TZifReader {
    let bytes: [UInt8]
    let source: String
    var position = 0

    var remaining: Int { bytes.count - position }

    func failure(_ problem: String) -> ZoneInfoError { .malformed(path: source, problem: problem) }

    mutating func take(_ count: Int, _ what: String) throws(ZoneInfoError) -> ArraySlice<UInt8> {
        guard count <= remaining else {
            throw failure("it ends inside \(what): \(count) bytes needed at offset \(position), \(remaining) left (truncated?)")
        }
        defer { position += count }
        return bytes[position..<position + count]
    }

    mutating func skip(_ count: Int, _ what: String) throws(ZoneInfoError) { _ = try take(count, what) }

    mutating func uint8() throws(ZoneInfoError) -> UInt8 { try take(1, "a local time type")[position - 1] }

    mutating func uint32(_ what: String) throws(ZoneInfoError) -> UInt32 {
        try take(4, what).reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func int32() throws(ZoneInfoError) -> Int { Int(Int32(bitPattern: try uint32("a 32-bit value"))) }

    mutating func int64() throws(ZoneInfoError) -> Int {
        Int(Int64(bitPattern: try take(8, "a 64-bit transition time").reduce(0) { $0 << 8 | UInt64($1) }))
    }

    mutating func header() throws(ZoneInfoError) -> TZifHeader {
        let start = position
        guard Array(try take(4, "the header")) == Array("TZif".utf8) else {
            throw failure(start == 0 ? "it does not start with \"TZif\" (not a compiled zone file)"
                                     : "the version 2+ header at offset \(start) does not start with \"TZif\"")
        }
        let versionByte = try take(1, "the header")[start + 4]
        let version: Int
        switch versionByte {
        case 0: version = 1
        case UInt8(ascii: "2")...UInt8(ascii: "9"): version = Int(versionByte - UInt8(ascii: "0"))
        default: throw failure("unknown version byte 0x\(String(versionByte, radix: 16))")
        }
        try skip(15, "the header")
        var counts: [Int] = []
        for name in ["isutcnt", "isstdcnt", "leapcnt", "timecnt", "typecnt", "charcnt"] {
            counts.append(Int(try uint32("the header's \(name)")))
        }
        let header = TZifHeader(version: version, utcCount: counts[0], standardCount: counts[1], leapCount: counts[2],
                                timeCount: counts[3], typeCount: counts[4], charCount: counts[5])
        guard header.typeCount > 0 else { throw failure("it has no local time types (typecnt is 0)") }
        guard header.utcCount == 0 || header.utcCount == header.typeCount,
              header.standardCount == 0 || header.standardCount == header.typeCount else {
            throw failure("isutcnt \(header.utcCount) and isstdcnt \(header.standardCount) must each be 0 or typecnt \(header.typeCount)")
        }
        return header
    }

    /// The TZ string between two newlines after the version 2+ data.
    mutating func footer() throws(ZoneInfoError) -> String {
        guard try take(1, "the footer")[position - 1] == UInt8(ascii: "\n") else { throw failure("the footer does not start with a newline") }
        guard let end = bytes[position...].firstIndex(of: UInt8(ascii: "\n")) else {
            throw failure("the footer has no closing newline (truncated?)")
        }
        let text = bytes[position..<end]
        position = end + 1
        guard text.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { throw failure("the footer has bytes that are not printable ASCII") }
        return String(decoding: text, as: UTF8.self)
    }
}
