import BLEHost
import Foundation
import MetaWear
import Sensors
import PosixThreads
import TestSupport

/// An in-process emulated MetaWear (MetaMotion R or S) behind a ``MetaWearLink``, with the test
/// peer's waveform (x = int16(n), y = round(10000·sin(2πn/ODR)), z = int16(−n)) and its faults:
/// dropped samples, silence, dropped links. The Python peer covers the same through the real BLE
/// host; this one lets the board and supervisor logic be tested without it.
final class FakeMetaWear: @unchecked Sendable {
    enum Model: String { case mmr, mms }

    private let lock = NSLock()
    private var model: Model
    private(set) var writes: [String] = []
    var discoveryDelay: Duration = .zero
    /// How long the log clock's answer takes on the way back (the tick is read when asked): a
    /// gateway that reads it so measures the board's reset time later by about half of it.
    var clockAnswerDelay: Duration = .zero
    /// How many of the next links read no device information: each read waits until its link
    /// ends (a step that only a dropped link ends, as the supervisor's deadline is there for).
    var stalledLinks = 0
    // Board state that survives links.
    private var gyroConf: UInt8 = 0x28, gyroRange: UInt8 = 0
    private var gyroStarted = false, gyroInterrupt = false, gyroSubscribed = false, gyroPackedSubscribed = false
    private var switchSubscribed = false
    private var streamStart: Double = 0
    private(set) var n: Int64 = 0
    private(set) var samplesGenerated: Int64 = 0
    private(set) var samplesUndelivered: Int64 = 0
    private(set) var samplesDropped: Int64 = 0
    private var dropPending = 0
    private var silentUntil: Double = 0
    private var battery: (UInt8, UInt16) = (99, 4148)
    private var packedBuffer: [[UInt8]] = []
    /// A time accounter on the gyro's data register (`09 02 13 <data> ff a0 11 …`), and whether its
    /// output is notified (`09 07 id 01` and `09 03 01`).
    /// Or a packer of `packCount` on it (`09 02 13 <data> ff a0 10 05 <count − 1>`) with the accounter on
    /// its output (`09 02 09 03 <packer> …`).
    private var nextProcessor: UInt8 = 0
    private var packer: UInt8?, packCount = 1, packHeld: [[UInt8]] = []
    private var accounter: UInt8?
    private var accounterNotify = false, processorOutput = false
    // The current link.
    private var link: Link?
    private var streamer: Task<Void, Never>?
    private(set) var connections = 0

    init(model: Model) { self.model = model }
    /// When the board last reset (its log clock's tick 0).
    private let booted = FakeMetaWear.now()

    func withLock<T>(_ body: () -> T) -> T { lock.withLock(body) }

    static func now() -> Double { Date().timeIntervalSince1970 }

    /// A new connection (the previous one, if any, is dropped).
    func connect() -> Link {
        let link = Link(board: self)
        let old: Link? = withLock {
            let old = self.link
            self.link = link
            connections += 1
            return old
        }
        old?.drop(reason: "replaced")
        ensureStreamer()
        return link
    }

    func dropLink(reason: String = "remote user terminated (0x13)") {
        let link: Link? = withLock { let l = self.link; self.link = nil; return l }
        link?.drop(reason: reason)
    }

    func dropSamples(_ count: Int) { withLock { dropPending += count } }
    func silent(seconds: Double) { withLock { silentUntil = Self.now() + seconds } }
    func setBattery(_ percent: UInt8, _ mv: UInt16) { withLock { battery = (percent, mv) } }
    func pressButton() {
        guard withLock({ switchSubscribed }) else { return }
        notify([0x01, 0x01, 0x01])
        notify([0x01, 0x01, 0x00])
    }
    func stop() { streamer?.cancel(); dropLink(reason: "test over") }

    var odrHz: Double { withLock { 25 * Double(1 << (Int(gyroConf & 0x0F) - 6)) } }

    private var dataRegister: UInt8 { model == .mmr ? 0x05 : 0x04 }
    private var packedRegister: UInt8 { model == .mmr ? 0x07 : 0x05 }

    fileprivate func notify(_ bytes: [UInt8], isData: Bool = false) {
        let target: Link? = withLock { Self.now() < silentUntil ? nil : link }
        target?.deliver(bytes)
    }

    private func answer(_ bytes: [UInt8], after delay: Duration) {
        // why: a board slow to answer (discovery, its clock) is the behaviour under test: the answer
        // timeout doubles until it fits; a late clock answer moves the measured reset time.
        if delay == .zero { notify(bytes) } else { Task { try? await Task.sleep(for: delay); self.notify(bytes) } }
    }

    fileprivate func readDIS(_ uuid: String) -> String? {
        switch uuid {
        case MetaWearUUIDs.firmwareRevision: "1.7.3"
        case MetaWearUUIDs.modelNumber: model == .mmr ? "5" : "8"
        case MetaWearUUIDs.hardwareRevision: model == .mmr ? "0.4" : "0.1"
        case MetaWearUUIDs.manufacturerName: "MbientLab Inc"
        case MetaWearUUIDs.serialNumber: "0C1A00"
        default: nil
        }
    }

    private func moduleInfo(_ id: UInt8) -> [UInt8] {
        let mmr: [UInt8: [UInt8]] = [
            0x01: [0, 0], 0x02: [0, 0], 0x03: [1, 1], 0x09: [0, 0], 0x0A: [0, 0], 0x0B: [0, 2, 8, 0x80, 0x2B, 0, 0],
            0x0C: [0, 0], 0x11: [0, 3], 0x13: [0, 1], 0x14: [0, 0], 0xFE: [0, 0],
        ]
        let mms: [UInt8: [UInt8]] = [
            0x01: [0, 0], 0x02: [0, 1, 3, 0], 0x03: [4, 0], 0x09: [0, 0], 0x0A: [0, 0],
            0x0B: [0, 3, 8, 0, 0, 0xFB, 3, 0, 2], 0x0C: [0, 0], 0x11: [0, 0x0A, 7, 0], 0x13: [1, 0], 0xFE: [0, 0],
        ]
        return [id, 0x80] + ((model == .mmr ? mmr : mms)[id] ?? [])
    }

    fileprivate func received(_ bytes: [UInt8]) {
        withLock { writes.append(bytes.map { String(format: "%02x", $0) }.joined(separator: " ")) }
        guard bytes.count >= 2 else { return }
        let (module, register) = (bytes[0], bytes[1])
        if register == 0x80 {
            answer(moduleInfo(module), after: discoveryDelay)
            return
        }
        let arg = bytes.count > 2 ? bytes[2] : 0
        switch (module, register) {
        case (0x13, 0x83): notify([0x13, 0x83] + withLock { [gyroConf, gyroRange] })
        case (0x13, 0x03): withLock { gyroConf = bytes[2]; gyroRange = bytes[3] }
        case (0x13, 0x02): withLock { gyroInterrupt = arg == 1 }
        case (0x13, 0x01):
            withLock {
                if arg == 1 && !gyroStarted { n = 0; streamStart = Self.now(); packedBuffer = []; packHeld = [] }
                gyroStarted = arg == 1
            }
        case (0x13, dataRegister): withLock { gyroSubscribed = arg == 1 }
        case (0x13, packedRegister): withLock { gyroPackedSubscribed = arg == 1 }
        case (0x0B, 0x84):
            let tick = UInt32((Self.now() - booted) * 1000 / Logging.tickMilliseconds)
            answer([0x0B, 0x84, UInt8(tick & 0xFF), UInt8(tick >> 8 & 0xFF), UInt8(tick >> 16 & 0xFF), UInt8(tick >> 24), 0],
                   after: withLock { clockAnswerDelay })
        case (0x11, 0x8C), (0x11, 0xCC):
            let (pct, mv) = withLock { battery }
            notify([0x11, 0x8C, pct, UInt8(mv & 0xFF), UInt8(mv >> 8)])
        case (0x01, 0x01): withLock { switchSubscribed = arg == 1 }
        case (0x09, 0x02):
            let id: UInt8 = withLock {
                defer { nextProcessor &+= 1 }
                if bytes.count >= 9, bytes[2] == 0x13, bytes[3] == dataRegister, bytes[6] == 0x10 {
                    (packer, packCount) = (nextProcessor, Int(bytes[8]) + 1)
                }
                let source = bytes.count >= 9 && ((bytes[2] == 0x13 && bytes[3] == dataRegister && packer == nil)
                    || (bytes[2] == 0x09 && bytes[3] == 0x03 && bytes[4] == packer))
                if source, bytes[6] == 0x11 { accounter = nextProcessor }
                return nextProcessor
            }
            notify([0x09, 0x02, id])
        case (0x09, 0x03): withLock { processorOutput = arg == 1 }
        case (0x09, 0x07): withLock { if bytes.count >= 4, arg == accounter { accounterNotify = bytes[3] == 1 } }
        case (0x09, 0x06): withLock { if arg == accounter { accounter = nil; accounterNotify = false } }
        case (0x09, 0x08): withLock { (accounter, accounterNotify, nextProcessor, packer, packCount) = (nil, false, 0, nil, 1) }
        default: break
        }
    }

    private func ensureStreamer() {
        guard streamer == nil else { return }
        streamer = Task.detached { [weak self] in
            while !Task.isCancelled {
                // why: the fake board's sample clock: it emits every sample due each 2 ms, as a board streams in real time.
                try? await Task.sleep(for: .milliseconds(2))
                self?.produce()
            }
        }
    }

    /// Emits every sample due, as the peer does on each wake-up.
    private func produce() {
        let now = Self.now()
        let out: [[UInt8]] = withLock {
            let timed = processorOutput && accounterNotify ? accounter : nil
            guard gyroStarted, gyroInterrupt, gyroSubscribed || gyroPackedSubscribed || timed != nil else { return [] }
            let hz = 25 * Double(1 << (Int(gyroConf & 0x0F) - 6))
            let due = Int64((now - streamStart) * hz) + 1
            var packets: [[UInt8]] = []
            while n < due {
                let k = n
                n += 1
                samplesGenerated += 1
                if dropPending > 0 { dropPending -= 1; samplesDropped += 1; continue }
                if link?.notificationsEnabled != true || now < silentUntil { samplesUndelivered += 1; continue }
                let y = Int16((10000 * sin(2 * Double.pi * Double(k) / hz)).rounded(.toNearestOrEven))
                let sample = [Int16(truncatingIfNeeded: k), y, Int16(truncatingIfNeeded: -k)]
                    .flatMap { v -> [UInt8] in let u = UInt16(bitPattern: v); return [UInt8(u & 0xFF), UInt8(u >> 8)] }
                if let timed {
                    packHeld.append(sample)
                    guard packHeld.count >= packCount else { continue }
                    // The log clock's tick when the (last) sample was produced.
                    let tick = UInt32((streamStart + Double(k) / hz - booted) * 1000 / Logging.tickMilliseconds)
                    packets.append([0x09, 0x03, timed, UInt8(tick & 0xFF), UInt8(tick >> 8 & 0xFF), UInt8(tick >> 16 & 0xFF),
                                    UInt8(tick >> 24)] + packHeld.joined())
                    packHeld = []
                } else if gyroPackedSubscribed {
                    packedBuffer.append(sample)
                    if packedBuffer.count == 3 { packets.append([0x13, packedRegister] + packedBuffer.joined()); packedBuffer = [] }
                } else {
                    packets.append([0x13, dataRegister] + sample)
                }
            }
            return packets
        }
        for packet in out { notify(packet, isData: true) }
    }

    /// One connection to the fake board.
    final class Link: MetaWearLink, @unchecked Sendable {
        private unowned let board: FakeMetaWear
        private let lock = NSLock()
        private var sink: Sink?
        /// The board runs here; notifications are delivered on it, in order, as the real host does.
        let loop = ThreadExecutor.dataPlane

        struct Sink {
            let receive: @Sendable (NotificationBatch) -> Void
            let ended: @Sendable () -> Void
        }
        private var gone: String?
        private var goneWaiters: [CheckedContinuation<String, Never>] = []
        private lazy var stalls: Bool = board.withLock {
            defer { board.stalledLinks = max(board.stalledLinks - 1, 0) }
            return board.stalledLinks > 0
        }

        init(board: FakeMetaWear) { self.board = board }

        /// The CCCD is on and the link is up.
        var notificationsEnabled: Bool { lock.withLock { sink != nil && gone == nil } }

        func enableNotifications(receive: @escaping @Sendable (NotificationBatch) -> Void,
                                 ended: @escaping @Sendable () -> Void) async throws {
            let isGone = lock.withLock { sink = Sink(receive: receive, ended: ended); return gone != nil }
            if isGone { throw Closed() }
        }

        func readString(_ characteristicUUID: String) async throws -> String? {
            try check()
            if lock.withLock({ stalls }) { _ = await waitForDisconnection() }
            try check()
            return board.readDIS(characteristicUUID)
        }

        func write(_ command: MetaWearCommand) async throws {
            try check()
            board.received(command.bytes)
        }

        func requestConnectionInterval(minimumMilliseconds: Double, maximumMilliseconds: Double) async {}

        func disconnect() async {
            board.withLock { if board.link === self { board.link = nil } }
            drop(reason: "local host terminated (0x16)")
        }

        func waitForDisconnection() async -> String {
            await withCheckedContinuation { continuation in
                let already: String? = lock.withLock {
                    if let gone { return gone }
                    goneWaiters.append(continuation)
                    return nil
                }
                if let already { continuation.resume(returning: already) }
            }
        }

        struct Closed: Error {}
        private func check() throws {
            if lock.withLock({ gone != nil }) { throw Closed() }
        }

        fileprivate func deliver(_ bytes: [UInt8]) {
            guard let sink = lock.withLock({ gone == nil ? self.sink : nil }) else { return }
            loop.execute { sink.receive(NotificationBatch(bytes[...])) }
        }

        fileprivate func drop(reason: String) {
            let taken: ([CheckedContinuation<String, Never>], Sink?)? = lock.withLock {
                guard gone == nil else { return nil }
                gone = reason
                let result = (goneWaiters, sink)
                goneWaiters = []
                return result
            }
            guard let (waiters, sink) = taken else { return }
            if let sink { loop.execute { sink.ended() } }
            for waiter in waiters { waiter.resume(returning: reason) }
        }
    }
}

/// Connects to fake boards by address.
struct FakeConnector: MetaWearConnector {
    let boards: [String: FakeMetaWear]
    /// Counts the scans made, for a test to wait on.
    var scans = Watched(0)
    func connect(address: String, timeout: Duration) async throws -> any MetaWearLink {
        guard let board = boards[address] else { throw CancellationError() }
        return board.connect()
    }
    func scan(timeout: Duration) async throws -> [String] {
        scans.update { $0 += 1 }
        return Array(boards.keys).sorted()
    }
}
