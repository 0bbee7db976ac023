/// Puts three-axis samples back together from their log entries (protocol reference, section 9.5).
///
/// A 6-byte sample is logged as two entries, x and y under the first logger id and z under the
/// second. They arrive in order per id but not necessarily paired within a notification, so each id
/// has a queue; when both hold an entry, one of each makes a sample, stamped with the tick of the
/// entry that completed it. Entries of other ids (loggers this gateway did not create) are counted
/// and ignored.
public struct LogReassembler: Sendable {
    /// One logged sample: the board's power cycle, its tick in that cycle, the raw axes.
    public struct Sample: Hashable, Sendable {
        public var resetUID: UInt8
        public var tick: UInt32
        public var triple: RawTriple

        public init(resetUID: UInt8, tick: UInt32, triple: RawTriple) {
            self.resetUID = resetUID
            self.tick = tick
            self.triple = triple
        }
    }

    public let firstID: UInt8
    public let secondID: UInt8
    public private(set) var ignoredEntries = 0
    public private(set) var entries = 0
    private var first: [Logging.Entry] = []
    private var second: [Logging.Entry] = []
    private var firstHead = 0
    private var secondHead = 0

    public init(firstID: UInt8, secondID: UInt8) {
        self.firstID = firstID
        self.secondID = secondID
    }

    /// Entries not yet paired.
    public var unpaired: Int { first.count - firstHead + second.count - secondHead }

    /// Takes the entries of one notification; appends the samples they complete to `out`.
    public mutating func take(_ entries: [Logging.Entry], into out: inout [Sample]) {
        for entry in entries {
            self.entries += 1
            switch entry.id {
            case firstID: first.append(entry)
            case secondID: second.append(entry)
            default: ignoredEntries += 1; continue
            }
            while firstHead < first.count, secondHead < second.count {
                let (a, b) = (first[firstHead], second[secondHead])
                // Both slices of a sample are logged at once: a pair whose ticks differ lost a
                // slice (an overwritten oldest entry); the older entry has no partner.
                guard a.resetUID == b.resetUID, a.tick &- b.tick <= 1 || b.tick &- a.tick <= 1 else {
                    if a.resetUID != b.resetUID ? a.resetUID < b.resetUID : a.tick < b.tick { firstHead += 1 } else { secondHead += 1 }
                    ignoredEntries += 1
                    continue
                }
                firstHead += 1
                secondHead += 1
                let triple = RawTriple(x: Int16(truncatingIfNeeded: a.data), y: Int16(truncatingIfNeeded: a.data >> 16),
                                       z: Int16(truncatingIfNeeded: b.data))
                let later = a.tick >= b.tick ? a : b
                out.append(Sample(resetUID: later.resetUID, tick: later.tick, triple: triple))
            }
        }
        if firstHead == first.count { first.removeAll(keepingCapacity: true); firstHead = 0 }
        if secondHead == second.count { second.removeAll(keepingCapacity: true); secondHead = 0 }
    }
}
