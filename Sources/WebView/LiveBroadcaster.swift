import Capture
import FoundationEssentials
import JSON
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1

/// Sends the live points and the sensors' state to every viewer: one timer, one read of the tap
/// and one encoding per tick whatever the number of viewers, and no timer while nobody watches.
///
/// One wake-up every two seconds does everything: it gathers the sensors' state, then reads the
/// tap and writes points and state as one buffer, shared by every viewer. At a few hundred
/// samples per second the gateway's own work is a fraction of a millisecond per second, so the
/// wake-ups and writes are what a viewer costs (docs/benchmarks.md, "Live view"). The timer runs
/// on the loop that serves the viewers' channels (``WebServer``), so the writes need no hop to
/// another thread. The page draws the traces a fixed delay behind the gateway's clock, so they
/// scroll smoothly between ticks.
/// A viewer whose socket is not writable misses a tick's points (its trace shows a break)
/// rather than being buffered for, so slow viewers cannot grow the gateway's memory.
final class LiveBroadcaster: Sendable {
    static let tick: TimeAmount = .seconds(2)

    let limit: Int
    private let tap: LiveTap
    let loop: any EventLoop
    private let sensors: @Sendable () async -> JSONValue

    private struct State {
        var viewers: [ObjectIdentifier: any Channel] = [:]
        /// The newest point sent to the viewers.
        var sent: Int64 = 0
        var timer: RepeatedTask?
        /// The last `sensors` event, for viewers that connect between two.
        var sensorsEvent: [UInt8]?
        var closed = false
    }

    private let state = NIOLockedValueBox(State())

    init(limit: Int, tap: LiveTap, loop: any EventLoop, sensors: @escaping @Sendable () async -> JSONValue) {
        self.limit = limit
        self.tap = tap
        self.loop = loop
        self.sensors = sensors
    }

    /// Admits `channel` as a viewer unless `limit` are connected; returns what it gets first:
    /// the points after `after` that were already broadcast (so that none comes twice or is
    /// missed) and the last sensors event. It leaves when it closes.
    func admit(_ channel: any Channel, after: Int64) -> [UInt8]? {
        let key = ObjectIdentifier(channel)
        let first: [UInt8]? = state.withLockedValue { state in
            guard !state.closed, state.viewers.count < limit else { return nil }
            if state.viewers.isEmpty {
                // Nobody watched: the tap's points up to now count as sent.
                state.sent = tap.points(after: Int64.max).last
                // The first tick comes soon so that a new viewer sees the sensors' state at once.
                let loop = self.loop
                state.timer = loop.scheduleRepeatedAsyncTask(initialDelay: .milliseconds(100), delay: Self.tick) { [weak self] _ in
                    self?.broadcast() ?? loop.makeSucceededVoidFuture()
                }
            }
            state.viewers[key] = channel
            // A gateway restarted since the viewer's last event numbers its points from 1 again.
            let from = after > state.sent ? 0 : after
            var bytes = Array("retry: 2000\n\n".utf8)
            let history = tap.points(after: from).points.filter { $0.sequence <= state.sent }
            if let last = history.last { bytes += LiveEncoding.pointsEvent(history, id: last.sequence) }
            if let sensors = state.sensorsEvent { bytes += sensors }
            return bytes
        }
        if first != nil {
            channel.closeFuture.whenComplete { [weak self] _ in self?.remove(key) }
        }
        return first
    }

    var count: Int { state.withLockedValue { $0.viewers.count } }

    private func remove(_ key: ObjectIdentifier) {
        state.withLockedValue { state in
            state.viewers.removeValue(forKey: key)
            if state.viewers.isEmpty {
                state.timer?.cancel()
                state.timer = nil
            }
        }
    }

    func closeAll() {
        let channels = state.withLockedValue { state in
            state.closed = true
            state.timer?.cancel()
            state.timer = nil
            return Array(state.viewers.values)
        }
        for channel in channels { channel.close(promise: nil) }
    }

    /// One tick: the sensors' state first (the only asynchronous step), then the points up to
    /// that moment, both in one write per viewer. The next tick is scheduled when this one is done.
    private func broadcast() -> EventLoopFuture<Void> {
        let promise = loop.makePromise(of: JSONValue.self)
        let sensors = self.sensors
        promise.completeWithTask { await sensors() }
        return promise.futureResult.map { [weak self] sensorsValue in
            guard let self else { return }
            var sensorsEvent = Array("event: sensors\ndata: ".utf8)
            sensorsEvent += sensorsValue.encoded(.sortedKeys)
            sensorsEvent += Array("\n\n".utf8)
            let (viewers, bytes): ([any Channel], [UInt8]) = state.withLockedValue { state in
                let (points, last) = tap.points(after: state.sent)
                state.sent = last
                state.sensorsEvent = sensorsEvent
                let bytes = points.isEmpty ? sensorsEvent : LiveEncoding.pointsEvent(points, id: last) + sensorsEvent
                return (Array(state.viewers.values), bytes)
            }
            guard let channel = viewers.first else { return }
            // One buffer for every viewer: a ByteBuffer's storage is shared, not copied, per write.
            let buffer = channel.allocator.buffer(bytes: bytes)
            for channel in viewers where channel.isWritable {
                channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(buffer)), promise: nil)
            }
        }
    }
}

/// The `points` event: `{"ADDRESS":[[ms,x,y,z,gap],...],...}`, values to two decimals (a plot
/// needs no more), written as bytes without intermediate strings.
enum LiveEncoding {
    static func pointsEvent(_ points: [LiveTap.Point], id: Int64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + points.count * 40)
        out += Array("id: ".utf8)
        integer(id, into: &out)
        out += Array("\nevent: points\ndata: {".utf8)
        var devices: [String] = []
        for point in points where !devices.contains(point.device) { devices.append(point.device) }
        for (index, device) in devices.sorted().enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            out += Array(device.utf8)
            out += Array("\":[".utf8)
            var first = true
            for point in points where point.device == device {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                out.append(UInt8(ascii: "["))
                integer(Int64(point.timestampMs.rounded()), into: &out)
                for value in [point.x, point.y, point.z] {
                    out.append(UInt8(ascii: ","))
                    hundredths(value, into: &out)
                }
                out += point.gap ? Array(",1]".utf8) : Array(",0]".utf8)
            }
            out.append(UInt8(ascii: "]"))
        }
        out += Array("}\n\n".utf8)
        return out
    }

    static func integer(_ value: Int64, into out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: [UInt8] = []
        repeat {
            digits.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        out += digits.reversed()
    }

    static func hundredths(_ value: Float, into out: inout [UInt8]) {
        guard value.isFinite else { return out.append(UInt8(ascii: "0")) }
        let scaled = Int64((Double(value) * 100).rounded())
        if scaled < 0 { out.append(UInt8(ascii: "-")) }
        let magnitude = Int64(scaled.magnitude)
        integer(magnitude / 100, into: &out)
        out.append(UInt8(ascii: "."))
        out.append(UInt8(ascii: "0") + UInt8(magnitude % 100 / 10))
        out.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
    }

    /// The `hundredths` text of `value`, for tests.
    static func rounded(_ value: Float) -> String {
        var out: [UInt8] = []
        hundredths(value, into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
