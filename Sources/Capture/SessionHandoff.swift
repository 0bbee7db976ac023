import GyroStore
import HostTime
import JSON

/// An open session passed from one gateway of a fleet to the next: what the next one needs to
/// go on writing the same `records` document for the same user, and where each stream goes on.
///
/// The gateway whose link to the board ended writes it (``CaptureEngine/releaseSession(device:gateway:boardCycle:carryingGapChunks:)``)
/// once every document it wrote for the session is published, and stops writing the session;
/// the gateway that connects to the board next takes it (``CaptureEngine/adoptSession(_:)``) and
/// from then on is the only one that writes it. The samples the board produced in between are a
/// `handedOver` gap of each stream. docs/fleet.md ("Sessions across gateways") gives the
/// rule and why one gateway at a time writes a session.
public struct SessionHandoff: Sendable, Equatable {
    /// Where one stream of the session goes on.
    public struct Stream: Sendable, Equatable {
        public var nextIndex: Int64
        /// The stored time (epoch ms) of the stream's last sample.
        public var lastMs: Double
        /// The `seq` of the stream's last chunk.
        public var lastSeq: Int
        public var odrHz: Double
        public var range: Double

        public init(nextIndex: Int64, lastMs: Double, lastSeq: Int, odrHz: Double, range: Double) {
            (self.nextIndex, self.lastMs, self.lastSeq, self.odrHz, self.range) = (nextIndex, lastMs, lastSeq, odrHz, range)
        }
    }

    /// The board's power cycle as the releasing gateway placed it: its `reset_uid` and when its
    /// tick 0 was (true time, epoch s). The next gateway places the same cycle there, so that the
    /// board's stamps on both sides of the hand-off share one frame and the samples produced in
    /// between are counted exactly; two gateways' own readings of the clock differ by their
    /// round trips, which under load can pass half a sample period.
    public struct BoardCycle: Sendable, Equatable {
        public var resetUID: UInt8
        public var resetTime: Double

        public init(resetUID: UInt8, resetTime: Double) { (self.resetUID, self.resetTime) = (resetUID, resetTime) }

        /// The same cycle with its reset time moved by `seconds`: from one gateway's timeline
        /// into true time (its clock correction) or back.
        public func shifted(bySeconds seconds: Double) -> BoardCycle {
            BoardCycle(resetUID: resetUID, resetTime: resetTime + seconds)
        }
    }

    /// The session as the releasing gateway last wrote it, its chunk lists in full.
    public var session: SessionRecord
    public var streams: [SensorStream: Stream]
    /// The gateway that released it, and when (its clock, epoch ms).
    public var from: String
    public var atMs: Double
    /// Nil when the releasing gateway never read the board's clock (a board without logging).
    public var boardCycle: BoardCycle?
    /// The session's closed chunks that list a gap a backfill could still fill, with their
    /// documents, so that the next gateway can fill them (`GyroStore.CarriedChunk`).
    public var carried: [CarriedChunk]

    public init(session: SessionRecord, streams: [SensorStream: Stream], from: String, atMs: Double, boardCycle: BoardCycle? = nil,
                carried: [CarriedChunk] = []) {
        (self.session, self.streams, self.from, self.atMs, self.boardCycle) = (session, streams, from, atMs, boardCycle)
        self.carried = carried
    }

    /// The retained document (`gyrogate/fleet/handoff/<device>`).
    public func encoded() -> [UInt8] {
        var streamObjects: [String: JSONValue] = [:]
        for (stream, state) in streams {
            streamObjects[stream.rawValue] = .object([
                "nextIndex": .integer(state.nextIndex), "lastMs": .number(state.lastMs), "lastSeq": .integer(Int64(state.lastSeq)),
                "odrHz": .number(state.odrHz), "range": .number(state.range),
            ])
        }
        // Apart from the literal below: a long literal with a closure in it is more than some
        // compilers (the arm64 package's) type-check in reasonable time.
        var cycle = JSONValue.null
        if let boardCycle {
            cycle = .object(["resetUID": .integer(Int64(boardCycle.resetUID)), "resetTime": .number(boardCycle.resetTime)])
        }
        let object: JSONValue = .object([
            "session": .string(session.id), "userId": .string(session.userId), "device": .string(session.device),
            "startMs": .number(session.startMs), "lastSampleMs": session.lastSampleMs.map(JSONValue.number) ?? .null,
            "localDate": .string(session.localDate), "dating": session.dating.map { .string($0.rawValue) } ?? .null,
            "samples": .integer(session.samples), "expected": .integer(session.expected),
            "hazards": (try? JSONValue(parsing: Array(JSONColumn.text(session.hazards).utf8))) ?? .object([:]),
            "gaps": (try? JSONValue(parsing: Array(JSONColumn.text(session.gaps).utf8))) ?? .array([]),
            "gscope_data": .array(session.chunkIds.map(JSONValue.string)),
            "accel_data": .array(session.accelChunkIds.map(JSONValue.string)),
            "streams": .object(streamObjects), "from": .string(from), "atMs": .number(atMs),
            "boardCycle": cycle, "carried": carriedValue(),
        ])
        return object.encoded()
    }

    /// Reads a hand-off document; `device` is its topic's last level, which it must name.
    public init(parsing payload: [UInt8], device: String) throws(HandoffError) {
        let object: [String: JSONValue]
        do { object = try JSONValue.object(parsing: payload) } catch { throw .unreadable(device: device, "not a JSON object (\(error))") }
        func text(_ key: String) throws(HandoffError) -> String {
            guard let value = object[key]?.string, !value.isEmpty else { throw .unreadable(device: device, "no \"\(key)\" string") }
            return value
        }
        func number(_ key: String) throws(HandoffError) -> Double {
            guard let value = object[key]?.double, value.isFinite else { throw .unreadable(device: device, "no \"\(key)\" number") }
            return value
        }
        func count(_ key: String) throws(HandoffError) -> Int64 {
            guard let value = object[key]?.int64, value >= 0 else { throw .unreadable(device: device, "no \"\(key)\" count") }
            return value
        }
        func ids(_ key: String) throws(HandoffError) -> [String] {
            guard let items = object[key]?.array else { throw .unreadable(device: device, "no \"\(key)\" list") }
            let values = items.compactMap(\.string)
            guard values.count == items.count, !values.contains(where: { $0.isEmpty || $0.contains(",") }) else {
                throw .unreadable(device: device, "\"\(key)\" holds something that is not a chunk id")
            }
            return values
        }
        guard try text("device").uppercased() == device.uppercased() else {
            throw .unreadable(device: device, "names device \(object["device"]?.text ?? "?"), not its topic's")
        }
        var session = SessionRecord(id: try text("session"), userId: try text("userId"), device: try text("device"),
                                    startMs: try number("startMs"), localDate: try text("localDate"))
        session.lastSampleMs = object["lastSampleMs"]?.double
        session.dating = object["dating"]?.string.flatMap(Dating.init(rawValue:))
        session.samples = try count("samples")
        session.expected = try count("expected")
        guard session.expected >= session.samples else { throw .unreadable(device: device, "expects fewer samples than it holds") }
        do {
            session.hazards = try JSONColumn.hazards(String(decoding: (object["hazards"] ?? .object([:])).encoded(), as: UTF8.self))
            session.gaps = try JSONColumn.gaps(String(decoding: (object["gaps"] ?? .array([])).encoded(), as: UTF8.self))
        } catch { throw .unreadable(device: device, "\(error)") }
        session.chunkIds = try ids("gscope_data")
        session.accelChunkIds = try ids("accel_data")
        var streams: [SensorStream: Stream] = [:]
        for (name, value) in object["streams"]?.object ?? [:] {
            guard let stream = SensorStream(rawValue: name), let nextIndex = value["nextIndex"]?.int64, nextIndex >= 0,
                  let lastMs = value["lastMs"]?.double, let lastSeq = value["lastSeq"]?.int, lastSeq >= 0,
                  let odrHz = value["odrHz"]?.double, odrHz > 0, let range = value["range"]?.double else {
                throw .unreadable(device: device, "stream \"\(name)\" lacks nextIndex, lastMs, lastSeq, odrHz or range")
            }
            streams[stream] = Stream(nextIndex: nextIndex, lastMs: lastMs, lastSeq: lastSeq, odrHz: odrHz, range: range)
        }
        var cycle: BoardCycle?
        if let value = object["boardCycle"], value != .null {
            guard let uid = value["resetUID"]?.int64, (0...255).contains(uid), let resetTime = value["resetTime"]?.double, resetTime.isFinite else {
                throw .unreadable(device: device, "\"boardCycle\" lacks a resetUID (a byte) or a resetTime")
            }
            cycle = BoardCycle(resetUID: UInt8(uid), resetTime: resetTime)
        }
        self.init(session: session, streams: streams, from: try text("from"), atMs: try number("atMs"), boardCycle: cycle,
                  carried: try Self.carried(object["carried"], sessionId: session.id, device: device))
    }
}

/// A hand-off document that cannot be used: the session it names is not continued here (the
/// board's samples go into a new session) and the reason is logged.
public enum HandoffError: Error, Sendable, Equatable, CustomStringConvertible {
    case unreadable(device: String, String)

    public var description: String {
        switch self {
        case let .unreadable(device, reason): "the session hand-off for \(device) is ignored: \(reason)"
        }
    }
}
