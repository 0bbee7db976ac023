import Capture
import FoundationEssentials
import GatewayConfig
import JSON
import NIOCore
import NIOHTTP1

/// One viewer's Server-Sent Events stream: `points` events (decimated samples per sensor, each
/// event's id the newest point's sequence number) several times a second, and a `sensors`
/// event every second. A browser that reconnects sends `Last-Event-ID` and gets the points it
/// missed that the tap still holds; a new viewer gets the tap's whole history (about ten
/// seconds), so its plots start full.
///
/// A viewer that cannot keep up (its socket not writable) is skipped on a tick rather than
/// buffered for: the tap bounds what is kept, so memory stays bounded whatever the viewers do.
final class LiveStream: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    static let pointsEvery: TimeAmount = .milliseconds(200)
    static let sensorsEvery = 5

    let web: WebContext
    private var after: Int64
    private var ticks = 0
    private var timer: RepeatedTask?
    private var sensorsPending = false

    init(web: WebContext, after: Int64) {
        self.web = web
        self.after = after
    }

    func handlerAdded(context: ChannelHandlerContext) {
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "text/event-stream")
        headers.add(name: "cache-control", value: "no-store")
        headers.add(name: "x-accel-buffering", value: "no")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        // A gateway restarted since the viewer's last event numbers its points from 1 again.
        if after > web.tap.points(after: Int64.max).last { after = 0 }
        write(context, "retry: 2000\n\n")
        tick(context)
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleRepeatedTask(initialDelay: Self.pointsEvery, delay: Self.pointsEvery) { _ in
            let (stream, context) = bound.value
            stream.tick(context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

    private func tick(_ context: ChannelHandlerContext) {
        guard context.channel.isActive, context.channel.isWritable else { return }
        let (points, last) = web.tap.points(after: after)
        if !points.isEmpty {
            write(context, "id: \(last)\nevent: points\ndata: \(Self.pointsJSON(points))\n\n")
            after = last
        }
        if ticks % Self.sensorsEvery == 0 && !sensorsPending {
            sensorsPending = true
            let promise = context.eventLoop.makePromise(of: String.self)
            let web = self.web
            promise.completeWithTask {
                String(decoding: Self.sensorsJSON(await web.sensors(), web.api.configuration).encoded(.sortedKeys), as: UTF8.self)
            }
            let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            promise.futureResult.whenSuccess { text in
                let (stream, context) = bound.value
                stream.sensorsPending = false
                guard context.channel.isActive else { return }
                stream.write(context, "event: sensors\ndata: \(text)\n\n")
            }
        }
        ticks += 1
    }

    private func write(_ context: ChannelHandlerContext, _ text: String) {
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: text)))), promise: nil)
    }

    /// `{"ADDRESS":[[ms,x,y,z,gap],...],...}`: values to two decimals (a plot needs no more).
    static func pointsJSON(_ points: [LiveTap.Point]) -> String {
        var byDevice: [String: [LiveTap.Point]] = [:]
        for point in points { byDevice[point.device, default: []].append(point) }
        var text = "{"
        for (index, (device, list)) in byDevice.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { text += "," }
            text += "\"\(device)\":["
            for (k, point) in list.enumerated() {
                if k > 0 { text += "," }
                text += "[\(Int64(point.timestampMs.rounded())),\(rounded(point.x)),\(rounded(point.y)),\(rounded(point.z)),\(point.gap ? 1 : 0)]"
            }
            text += "]"
        }
        return text + "}"
    }

    static func rounded(_ value: Float) -> String {
        guard value.isFinite else { return "0" }
        let hundredths = Int64((Double(value) * 100).rounded())
        let sign = hundredths < 0 ? "-" : ""
        let magnitude = hundredths.magnitude
        let fraction = magnitude % 100
        return "\(sign)\(magnitude / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    static func sensorsJSON(_ sensors: [LiveSensor], _ configuration: GatewayConfiguration) -> JSONValue {
        let names = Dictionary(configuration.sensors.map { ($0.address.uppercased(), $0.name) }, uniquingKeysWith: { first, _ in first })
        return [
            "nowMs": (Date().timeIntervalSince1970 * 1000).rounded().jsonValue,
            "sensors": .array(sensors.map { sensor in
                [
                    "address": .string(sensor.address), "name": names[sensor.address.uppercased()].jsonValue, "userId": .string(sensor.userId),
                    "state": .string(sensor.state), "batteryPercent": sensor.batteryPercent.jsonValue, "odrHz": sensor.odrHz.jsonValue,
                    "samplesReceived": sensor.samplesReceived.jsonValue, "samplesExpected": sensor.samplesExpected.jsonValue,
                    "gaps": sensor.gaps.jsonValue, "missingSamples": sensor.missingSamples.jsonValue, "backfill": .bool(sensor.backfill),
                    "backfilledSamples": sensor.backfilledSamples.jsonValue, "lastSampleMs": sensor.lastSampleMs.jsonValue,
                    "lastError": sensor.lastError.jsonValue,
                ]
            }),
        ]
    }
}
