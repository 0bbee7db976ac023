/// Which logged samples fill which indices of a gap: a pure plan, checked by unit tests.
///
/// The samples are the board's own record, timestamped on the host clock through the log clock's
/// reference (the same frame as the streamed stamps, within a millisecond or two). Those inside the
/// gap's time window, from half a period after the last sample before it to half a period before
/// the first one after it, are the missing ones. When there are exactly as many as the gap misses,
/// they take its indices in order; otherwise each takes the index nearest its time on the gap's
/// grid, once. The grid steps by the stream's period from the gap's start when their number is one
/// or two off `missing` (a count estimated at a restart, whose start is exact, or a sample or two
/// the log lost), or when the gap's end is not where its last sample was due (the board reset or
/// stopped before it); otherwise it is evenly spaced between the gap's ends, which follows a
/// board's clock drift. Indices left empty become the remaining gaps.
public struct GapFill: Sendable, Equatable {
    /// Index and sample for every filled index, in index order.
    public var filled: [(index: Int64, sample: StoredSample)]
    /// What is left of the gap (none when it is filled completely).
    public var remaining: [GapRange]

    public static func == (a: GapFill, b: GapFill) -> Bool {
        a.remaining == b.remaining && a.filled.map(\.index) == b.filled.map(\.index) && a.filled.map(\.sample) == b.filled.map(\.sample)
    }

    /// `samples` sorted by time; `periodMs` is the stream's nominal sample period.
    public init(gap: GapRange, periodMs: Double, samples: [StoredSample]) {
        let low = gap.fromMs - periodMs / 2, high = gap.toMs + periodMs / 2
        var first = samples.partitioningIndex { $0.timestampMs > low }
        var inside: [StoredSample] = []
        while first < samples.count, samples[first].timestampMs < high {
            inside.append(samples[first])
            first += 1
        }
        let even = gap.missing > 1 ? (gap.toMs - gap.fromMs) / Double(gap.missing - 1) : periodMs
        // One or two off: a count estimated at a restart (its start is exact, its end ±1) or a
        // sample or two the log lost; the even grid would be a fraction of a period off per step.
        let step = abs(Int64(inside.count) - gap.missing) <= 2 || abs(even - periodMs) > 0.02 * periodMs ? periodMs : even
        var filled: [(index: Int64, sample: StoredSample)] = []
        if Int64(inside.count) == gap.missing {
            filled = inside.enumerated().map { (gap.fromIndex + Int64($0.offset), $0.element) }
        } else {
            var last = gap.fromIndex - 1
            for sample in inside {
                let position = ((sample.timestampMs - gap.fromMs) / step).rounded()
                guard position.isFinite else { continue }
                let index = gap.fromIndex + Int64(max(0, min(Double(gap.missing - 1), position)))
                if index > last {
                    filled.append((index, sample))
                    last = index
                }
            }
        }
        self.filled = filled
        var remaining: [GapRange] = []
        var next = gap.fromIndex
        func keep(_ from: Int64, _ to: Int64) {
            guard from <= to else { return }
            remaining.append(GapRange(stream: gap.stream, fromIndex: from, toIndex: to,
                                      fromMs: gap.fromMs + Double(from - gap.fromIndex) * step,
                                      toMs: gap.fromMs + Double(to - gap.fromIndex) * step, missing: to - from + 1, reason: gap.reason))
        }
        for (index, _) in filled {
            keep(next, index - 1)
            next = index + 1
        }
        keep(next, gap.toIndex)
        self.remaining = remaining
    }
}

extension Array {
    /// The first index whose element satisfies `predicate`, for a predicate false then true along the array.
    func partitioningIndex(where predicate: (Element) -> Bool) -> Int {
        var low = 0, high = count
        while low < high {
            let middle = (low + high) / 2
            if predicate(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
