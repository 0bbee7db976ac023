import Synchronization

/// A few decimated samples per sensor for the live view, kept for the last seconds.
///
/// Why here: the capture feed already holds one lock per notification on the data plane, and
/// decides there, with one comparison, whether a notification is due for the live view; only
/// due points (`pointsPerSecond` per sensor, whatever the output data rate) reach this tap and
/// its own lock. Viewers read what is newer than the sequence number they last saw, so a viewer
/// that reconnects with `Last-Event-ID` gets what it missed while the points are still kept.
///
/// A ring per sensor, found by comparing addresses (a handful of sensors: cheaper than hashing
/// the address for every point) and kept in address order, holds points without their address,
/// so that recording and reading copy plain values and retain nothing.
public final class LiveTap: Sendable {
    /// One plotted point; `gap` marks where samples are missing before it (the trace breaks).
    public struct Point: Sendable, Equatable {
        public var sequence: Int64
        public var device: String
        public var timestampMs: Double
        public var x: Float
        public var y: Float
        public var z: Float
        public var gap: Bool
    }

    /// A point in a sensor's ring: its sensor is the ring's.
    public struct Entry: Sendable, Equatable {
        public var sequence: Int64
        public var timestampMs: Double
        public var x: Float
        public var y: Float
        public var z: Float
        public var gap: Bool
    }

    public let pointsPerSecond: Int
    /// Points kept per sensor: `seconds` of history at `pointsPerSecond`.
    public let capacity: Int

    private struct Ring {
        let device: String
        var entries: [Entry] = []
        var next = 0

        mutating func append(_ entry: Entry, capacity: Int) {
            if entries.count < capacity { entries.append(entry) } else { entries[next] = entry }
            next = (next + 1) % capacity
        }

        /// The entries with a sequence number in `after + 1 ... through`, oldest first, into `out`.
        func newer(after: Int64, through: Int64, into out: inout [Entry]) {
            // Newest first from the slot before `next`, until one that was already read.
            var index = next, count = 0
            while count < entries.count {
                let previous = index == 0 ? entries.count - 1 : index - 1
                guard entries[previous].sequence > after else { break }
                index = previous
                count += 1
            }
            for _ in 0..<count {
                if entries[index].sequence <= through { out.append(entries[index]) }
                index = index + 1 == entries.count ? 0 : index + 1
            }
        }
    }

    private struct State {
        /// In address order.
        var rings: [Ring] = []
        var sequence: Int64 = 0
    }

    private let state = Mutex(State())

    public init(pointsPerSecond: Int, seconds: Int = 12) {
        self.pointsPerSecond = max(1, pointsPerSecond)
        capacity = max(1, pointsPerSecond * seconds)
    }

    /// The spacing of points, in sample time.
    var intervalMs: Double { 1000 / Double(pointsPerSecond) }

    func record(device: String, timestampMs: Double, x: Float, y: Float, z: Float, gap: Bool) {
        state.withLock { state in
            state.sequence += 1
            let entry = Entry(sequence: state.sequence, timestampMs: timestampMs, x: x, y: y, z: z, gap: gap)
            if let index = state.rings.firstIndex(where: { $0.device == device }) {
                state.rings[index].append(entry, capacity: capacity)
            } else {
                var ring = Ring(device: device)
                ring.append(entry, capacity: capacity)
                state.rings.insert(ring, at: state.rings.firstIndex(where: { $0.device > device }) ?? state.rings.endIndex)
            }
        }
    }

    /// The newest sequence number.
    public var last: Int64 { state.withLock { $0.sequence } }

    /// Calls `body` for each sensor, in address order, with its points numbered
    /// `after + 1 ... through`, oldest first (sensors without any are skipped); returns the
    /// newest sequence number. `body` runs under the tap's lock, which the data plane takes for
    /// every point: it copies or encodes them, and waits for nothing.
    public func read(after: Int64, through: Int64 = .max, _ body: (_ device: String, _ entries: [Entry]) -> Void) -> Int64 {
        state.withLock { state in
            guard after < state.sequence else { return state.sequence }
            var entries: [Entry] = []
            for ring in state.rings {
                entries.removeAll(keepingCapacity: true)
                ring.newer(after: after, through: through, into: &entries)
                if !entries.isEmpty { body(ring.device, entries) }
            }
            return state.sequence
        }
    }

    /// Points with a sequence number above `after`, oldest first, and the newest sequence number.
    public func points(after: Int64) -> (points: [Point], last: Int64) {
        var result: [Point] = []
        let last = read(after: after) { device, entries in
            result += entries.map { Point(sequence: $0.sequence, device: device, timestampMs: $0.timestampMs, x: $0.x, y: $0.y, z: $0.z, gap: $0.gap) }
        }
        result.sort { $0.sequence < $1.sequence }
        return (result, last)
    }
}
