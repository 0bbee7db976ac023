import Capture
import FoundationEssentials
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Sends the live points and the sensors' state to every viewer: one tick, one read of the tap
/// and one encoding per tick whatever the number of viewers, and no tick while nobody watches.
///
/// At a few hundred samples per second the gateway's own work is a fraction of a millisecond
/// per second, so wake-ups, hops between threads and what a tick builds are what a viewer costs
/// (docs/benchmarks.md, "Live view"). Hence one tick about every two seconds doing everything,
/// and started where the sensors' state lives (``LiveSensorSource``): the daemon fires it on
/// the sensors' own loop at a wake-up that loop makes anyway, reads their state there without
/// a task or an actor hop, and hands it over with one wake-up of the loop that serves the
/// viewers' channels (``WebServer``), which then reads the tap, encodes both events into one
/// buffer and writes it to each viewer. The page draws the traces a fixed delay behind the
/// gateway's clock, so they scroll smoothly between ticks.
/// A viewer whose socket is not writable misses a tick's points (its trace shows a break)
/// rather than being buffered for, so slow viewers cannot grow the gateway's memory.
final class LiveBroadcaster: Sendable {
    /// Seconds between ticks: at least `interval`, at most `interval + tolerance`. The page's
    /// display delay (`DISPLAY_DELAY_MS`) must exceed their sum.
    static let interval = 1.8
    static let tolerance = 0.4
    /// The first tick after a first viewer, soon, so that it sees the sensors' state at once.
    static let firstTick = 0.1

    let limit: Int
    private let tap: LiveTap
    let loop: any EventLoop
    private let source: any LiveSensorSource
    /// Configured names by upper-case address.
    private let names: [String: String]
    /// Now (ms) on the timeline the tap's points are stamped on.
    private let timelineMs: @Sendable () -> Double

    private struct State {
        var viewers: [ObjectIdentifier: any Channel] = [:]
        /// The newest point sent to the viewers.
        var sent: Int64 = 0
        var ticks: (any LiveSensorTicks)?
        /// The last `sensors` event (empty: none yet), for viewers that connect between two.
        var sensorsEvent: [UInt8] = []
        /// A tick's bytes and the buffer written to the viewers, reused from tick to tick: a
        /// fresh allocation every two seconds would also touch fresh pages.
        var scratch: [UInt8] = []
        var buffer: ByteBuffer?
        var closed = false
    }

    private let state = NIOLockedValueBox(State())

    init(limit: Int, tap: LiveTap, loop: any EventLoop, source: any LiveSensorSource, names: [String: String],
         timelineMs: @escaping @Sendable () -> Double) {
        self.timelineMs = timelineMs
        self.limit = limit
        self.tap = tap
        self.loop = loop
        self.source = source
        self.names = names
    }

    /// Admits `channel` as a viewer unless `limit` are connected; returns what it gets first:
    /// the points after `after` that were already broadcast (so that none comes twice or is
    /// missed) and the last sensors event. It leaves when it closes.
    func admit(_ channel: any Channel, after: Int64) -> [UInt8]? {
        let key = ObjectIdentifier(channel)
        let first: [UInt8]? = state.withLockedValue { state in
            guard !state.closed, state.viewers.count < limit else { return nil }
            if state.viewers.isEmpty {
                // Nobody watched: the tap's points up to now count as sent, and the last
                // sensors event is stale.
                state.sent = tap.last
                state.sensorsEvent.removeAll(keepingCapacity: true)
                state.ticks = source.ticks(first: Self.firstTick, every: Self.interval, tolerance: Self.tolerance) { [weak self] sensors in
                    self?.deliver(sensors)
                }
            }
            state.viewers[key] = channel
            // A gateway restarted since the viewer's last event numbers its points from 1 again.
            let from = after > state.sent ? 0 : after
            var bytes = Array("retry: 2000\n\n".utf8)
            LiveEncoding.pointsEvent(tap, after: from, through: state.sent, into: &bytes)
            bytes += state.sensorsEvent
            return bytes
        }
        if first != nil {
            channel.closeFuture.whenComplete { [weak self] _ in self?.remove(key) }
        }
        return first
    }

    var count: Int { state.withLockedValue { $0.viewers.count } }

    private func remove(_ key: ObjectIdentifier) {
        let ticks: (any LiveSensorTicks)? = state.withLockedValue { state in
            state.viewers.removeValue(forKey: key)
            guard state.viewers.isEmpty else { return nil }
            defer { state.ticks = nil }
            return state.ticks
        }
        ticks?.stop()
    }

    func closeAll() {
        let (channels, ticks) = state.withLockedValue { state in
            state.closed = true
            defer { state.ticks = nil }
            return (Array(state.viewers.values), state.ticks)
        }
        ticks?.stop()
        for channel in channels { channel.close(promise: nil) }
    }

    /// A tick, where the source runs it: the time of the sensors' state is taken here, then one
    /// hop to the viewers' loop.
    private func deliver(_ sensors: [LiveSensor]) {
        let nowMs = timelineMs()
        loop.execute { [self] in broadcast(sensors, nowMs: nowMs) }
    }

    /// The points up to now and the sensors' state, in one write per viewer.
    private func broadcast(_ sensors: [LiveSensor], nowMs: Double) {
        let (viewers, buffer): ([any Channel], ByteBuffer?) = state.withLockedValue { state in
            guard let channel = state.viewers.values.first else { return ([], nil) }
            state.sensorsEvent.removeAll(keepingCapacity: true)
            LiveEncoding.sensorsEvent(sensors, names: names, nowMs: nowMs, into: &state.sensorsEvent)
            state.scratch.removeAll(keepingCapacity: true)
            state.sent = LiveEncoding.pointsEvent(tap, after: state.sent, into: &state.scratch)
            state.scratch += state.sensorsEvent
            // Unique again once the last tick's writes are done, so clearing keeps its storage.
            var buffer = state.buffer.take() ?? channel.allocator.buffer(capacity: state.scratch.count)
            buffer.clear()
            buffer.writeBytes(state.scratch)
            state.buffer = buffer
            return (Array(state.viewers.values), buffer)
        }
        guard let buffer else { return }
        // One buffer for every viewer: a ByteBuffer's storage is shared, not copied, per write.
        for channel in viewers where channel.isWritable {
            channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
        }
    }
}
