// The sessions a fill writes, newest first: each board's one or two sessions a day (morning,
// afternoon) of about `--session-hours`, back from now, each with a few gaps.

import SupportCore

/// The tests' seeded generator (Tests/SupportCore), so that a fill with the same options plans
/// the same sessions, with the ids a fill needs.
extension SplitMix64 {
    /// A version-4 UUID in lower-case hex, as the apps' chunk ids (and older gateways') are.
    mutating func uuid() -> String {
        let high = next() & ~0xF000 | 0x4000, low = next() & ~(0xC0 << 56) | (0x80 << 56)
        func hex(_ value: UInt64, _ nibbles: Int) -> String {
            let text = String(value & (nibbles == 16 ? ~0 : (1 << UInt64(nibbles * 4)) - 1), radix: 16)
            return String(repeating: "0", count: nibbles - text.count) + text
        }
        return "\(hex(high >> 32, 8))-\(hex(high >> 16, 4))-\(hex(high, 4))-\(hex(low >> 48, 4))-\(hex(low, 12))"
    }
}

/// Samples a board did not deliver: `count` stream indices from `from`.
struct PlannedGap {
    var from: Int64
    var count: Int64
    var disconnected: Bool
}

struct PlannedSession {
    var board: Int
    var startMs: Double
    /// Stream indices 0..<expected: the samples stored plus the gaps'.
    var expected: Int64
    /// Sorted, apart, none at the first or last index.
    var gaps: [PlannedGap]
    /// Where the synthetic motion starts (SessionBuilder).
    var phase: UInt64
}

struct FillPlan: IteratorProtocol {
    let options: FillOptions
    let nowMs: Double
    var rng: SplitMix64
    private var day = 0
    private var queued: [PlannedSession] = []

    init(options: FillOptions, nowMs: Double) {
        self.options = options
        self.nowMs = nowMs
        rng = SplitMix64(seed: options.seed)
    }

    mutating func next() -> PlannedSession? {
        // A year and a half back at most: beyond that the options cannot fill the target.
        while queued.isEmpty, day < 550 {
            queued = sessions(ofDay: day).sorted { $0.startMs > $1.startMs }
            day += 1
        }
        return queued.isEmpty ? nil : queued.removeFirst()
    }

    private mutating func sessions(ofDay back: Int) -> [PlannedSession] {
        let dayMs = 86_400_000.0
        let midnight = (nowMs / dayMs).rounded(.down) * dayMs - Double(back) * dayMs
        var planned: [PlannedSession] = []
        for board in 0..<options.sensors {
            var starts = [midnight + 7 * 3_600_000 + Double(board) * 1_200_000 + Double(rng.next() % 3_600_000)]
            if Double(rng.next() % 1000) < options.secondSession * 1000 {
                starts.append(midnight + 13 * 3_600_000 + Double(rng.next() % 3_600_000))
            }
            for start in starts {
                let durationMs = options.sessionHours * 3_600_000 - Double(rng.next() % 600_000)
                guard start + durationMs < nowMs - 60_000 else { continue }
                let expected = Int64(durationMs / 1000 * options.hz)
                planned.append(PlannedSession(board: board, startMs: start.rounded(), expected: expected,
                                              gaps: gaps(expected: expected), phase: rng.next()))
            }
        }
        return planned
    }

    /// One to `options.gaps` gaps: mostly a few samples lost on the air, sometimes a
    /// disconnection of some seconds.
    private mutating func gaps(expected: Int64) -> [PlannedGap] {
        guard expected > 10_000 else { return [] }
        let count = 1 + Int(rng.next() % UInt64(options.gaps))
        var gaps: [PlannedGap] = []
        for _ in 0..<count {
            let disconnected = rng.next() % 4 == 0
            let length = disconnected ? Int64(options.hz * Double(2 + rng.next() % 20)) : Int64(1 + rng.next() % 40)
            let from = 1 + Int64(rng.next() % UInt64(expected - length - 2))
            gaps.append(PlannedGap(from: from, count: length, disconnected: disconnected))
        }
        gaps.sort { $0.from < $1.from }
        var apart: [PlannedGap] = []
        for gap in gaps where apart.last.map({ $0.from + $0.count < gap.from }) ?? true { apart.append(gap) }
        return apart
    }
}
