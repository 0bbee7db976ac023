import Synchronization

/// A few decimated samples per sensor for the live view, kept for the last seconds.
///
/// Why here: the capture feed already holds one lock per notification on the data plane, and
/// decides there, with one comparison, whether a notification is due for the live view; only
/// due points (`pointsPerSecond` per sensor, whatever the output data rate) reach this tap and
/// its own lock. Viewers read what is newer than the sequence number they last saw, so a viewer
/// that reconnects with `Last-Event-ID` gets what it missed while the points are still kept.
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

    public let pointsPerSecond: Int
    /// Points kept per sensor: `seconds` of history at `pointsPerSecond`.
    public let capacity: Int

    private struct Ring {
        var points: [Point] = []
        var next = 0

        mutating func append(_ point: Point, capacity: Int) {
            if points.count < capacity { points.append(point) } else { points[next] = point }
            next = (next + 1) % capacity
        }
    }

    private struct State {
        var rings: [String: Ring] = [:]
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
            let point = Point(sequence: state.sequence, device: device, timestampMs: timestampMs, x: x, y: y, z: z, gap: gap)
            state.rings[device, default: Ring()].append(point, capacity: capacity)
        }
    }

    /// Points with a sequence number above `after`, oldest first, and the newest sequence number.
    public func points(after: Int64) -> (points: [Point], last: Int64) {
        state.withLock { state in
            var result: [Point] = []
            guard after < state.sequence else { return (result, state.sequence) }
            for ring in state.rings.values {
                // Newest first from the slot before `next`, until one that was already read.
                var newer: [Point] = []
                var index = ring.next
                for _ in 0..<ring.points.count {
                    index = index == 0 ? ring.points.count - 1 : index - 1
                    guard ring.points[index].sequence > after else { break }
                    newer.append(ring.points[index])
                }
                result += newer.reversed()
            }
            result.sort { $0.sequence < $1.sequence }
            return (result, state.sequence)
        }
    }
}
