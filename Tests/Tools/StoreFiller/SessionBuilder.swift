// One planned session as the capture engine would have left it closed: its row, its chunk rows
// and documents (full chunks of `--chunk-size` points, the last one partial), its gaps on the
// session and on the chunk that follows each, and its records and DailySessions documents, all
// rendered by the project's DocumentRenderer (compact chunk bodies, ChunkBody) and applied in
// one StoreChanges commit.
import SupportCore
import Capture
import Glibc
import GyroStore
import HostTime
import MetaWear

struct SessionBuilder {
    let options: FillOptions
    let calendar: PeriodCalendar
    let renderer = DocumentRenderer()
    /// Samples are whole counts of the 2000 °/s range, scaled as the sensors layer scales them,
    /// so that the store keeps them as counts (as a board's are).
    let unitsPerLSB = SampleDecoder(gyroRange: .dps2000).unitsPerLSB

    struct Built {
        var changes: StoreChanges
        var session: SessionRecord
        var samples: Int64
    }

    func build(_ planned: PlannedSession, id: String, rng: inout SplitMix64) throws -> Built {
        var session = SessionRecord(id: id, userId: options.user(planned.board), device: options.device(planned.board),
                                    startMs: planned.startMs, localDate: calendar.localDate(epochMs: planned.startMs))
        session.dating = .synchronised
        let period = 1000 / options.hz
        var changes = StoreChanges()
        var motion = Motion(phase: planned.phase, hz: options.hz)
        var samples: [StoredSample] = []
        samples.reserveCapacity(options.chunkSize)
        var chunk = ChunkRecord(id: rng.uuid(), sessionId: id, stream: "gyro", seq: 0, odrHz: options.hz, range: 2000, firstIndex: 0)
        var gaps = planned.gaps[...]
        var index: Int64 = 0, stored: Int64 = 0
        var lastMs: Double?

        func close() throws {
            guard let first = samples.first, let last = samples.last else { return }
            chunk.count = samples.count
            chunk.startMs = first.timestampMs
            chunk.endMs = last.timestampMs
            chunk.isOpen = false
            changes.chunks.append(chunk)
            changes.documents.append(DocumentWrite(path: try DocumentPaths.chunk(chunk.id),
                                                   body: renderer.chunk(chunk, session: session, samples: samples[...]),
                                                   retain: false, device: session.device))
            session.chunkIds.append(chunk.id)
            samples.removeAll(keepingCapacity: true)
        }

        while index < planned.expected {
            if let gap = gaps.first, gap.from == index {
                gaps.removeFirst()
                let atMs = planned.startMs + Double(index + gap.count) * period
                let range = GapRange(stream: "gyro", fromIndex: index, toIndex: index + gap.count - 1,
                                     fromMs: lastMs.map { $0 + period } ?? planned.startMs, toMs: atMs - period, missing: gap.count,
                                     reason: gap.disconnected ? .disconnected("link lost") : .notReceived)
                chunk.gaps.append(range)
                session.gaps.append(range)
                session.expected += gap.count
                index += gap.count
                if samples.isEmpty { chunk.firstIndex = index }
                continue
            }
            let (x, y, z) = motion.counts(at: index, rng: &rng)
            let t = planned.startMs + Double(index) * period
            samples.append(StoredSample(timestampMs: t, x: Float(Double(x) * unitsPerLSB), y: Float(Double(y) * unitsPerLSB),
                                        z: Float(Double(z) * unitsPerLSB)))
            lastMs = t
            index += 1
            stored += 1
            if samples.count == options.chunkSize {
                try close()
                chunk = ChunkRecord(id: rng.uuid(), sessionId: id, stream: "gyro", seq: chunk.seq + 1, odrHz: options.hz, range: 2000,
                                    firstIndex: index)
            }
        }
        try close()
        session.samples = stored
        session.expected += stored
        session.lastSampleMs = lastMs
        session.endMs = lastMs ?? planned.startMs
        session.isOpen = false
        changes.sessions = [session]
        changes.documents += renderer.sessionDocuments(session)
        return Built(changes: changes, session: session, samples: stored)
    }
}

/// A wearer's motion in counts: slow swings of a few hundred counts on each axis and a few
/// counts of sensor noise, so that the points cost what a real capture's do in a compact body.
struct Motion {
    private static let table: [Double] = (0..<4096).map { sin(Double($0) / 4096 * 2 * Double.pi) }
    private var phase: UInt64
    private let step: UInt64

    init(phase: UInt64, hz: Double) {
        self.phase = phase
        // About one swing every two seconds.
        step = UInt64(4096 * 65536 / (2 * hz))
    }

    mutating func counts(at index: Int64, rng: inout SplitMix64) -> (Int64, Int64, Int64) {
        phase &+= step
        let noise = rng.next()
        func axis(_ offset: UInt64, _ amplitude: Double, _ bits: UInt64) -> Int64 {
            let swing = Self.table[Int((phase / 65536 &+ offset) % 4096)] * amplitude
            return Int64(swing.rounded()) + Int64(bits & 15) - 7
        }
        return (axis(0, 400, noise), axis(1365, 250, noise >> 8), axis(2730, 150, noise >> 16))
    }
}
