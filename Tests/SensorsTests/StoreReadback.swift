import Capture
import Foundation
import GyroStore
import TestSupport

/// A gyro sample read back from the store with its stream index.
struct ReadbackSample {
    var index: Int64
    var timestampMs: Double
    var x: Double, y: Double, z: Double
}

/// Everything stored for one device: samples from closed chunks (their `realtime_data`
/// documents) and open chunks (sample rows), in index order, plus the sessions' gaps.
func readBack(_ store: GyroStore, device: String, stream: String = "gyro") async throws -> (samples: [ReadbackSample], gaps: [GapRange], sessions: [SessionRecord]) {
    let sessions = try await store.sessions().filter { $0.device == device }.sorted { $0.startMs < $1.startMs }
    var samples: [ReadbackSample] = []
    var gaps: [GapRange] = []
    for session in sessions {
        gaps += session.gaps.filter { $0.stream == stream }
        for chunk in try await store.chunks(sessionId: session.id).filter({ $0.stream == stream }).sorted(by: { $0.seq < $1.seq }) {
            var values: [(Double, Double, Double, Double)] = []
            if chunk.isOpen {
                values = try await store.samples(ofChunk: chunk.id).map { ($0.timestampMs, Double($0.x), Double($0.y), Double($0.z)) }
            } else {
                let body = try await store.document(DocumentPaths.chunk(chunk.id))
                let object = try jsonObject(body)
                let (kx, ky, kz) = stream == "gyro" ? ("gx", "gy", "gz") : ("ax", "ay", "az")
                for point in object["data"] as? [[String: Any]] ?? [] {
                    values.append(((point["timestamp"] as? NSNumber)?.doubleValue ?? .nan, (point[kx] as? NSNumber)?.doubleValue ?? .nan,
                                   (point[ky] as? NSNumber)?.doubleValue ?? .nan, (point[kz] as? NSNumber)?.doubleValue ?? .nan))
                }
            }
            var index = chunk.firstIndex
            var gapCursor = 0
            let chunkGaps = chunk.gaps.sorted { $0.fromIndex < $1.fromIndex }
            for value in values {
                while gapCursor < chunkGaps.count, chunkGaps[gapCursor].fromIndex <= index {
                    index = max(index, chunkGaps[gapCursor].toIndex + 1)
                    gapCursor += 1
                }
                samples.append(ReadbackSample(index: index, timestampMs: value.0, x: value.1, y: value.2, z: value.3))
                index += 1
            }
        }
    }
    return (samples, gaps, sessions)
}

/// Checks stored samples against the peer's waveform at `odr` and range `lsbPerDps`: x, y, z
/// within scale rounding, index − n constant between restarts of the board's counter, indices
/// strictly increasing (no duplicates). Returns the number of segments (board counter restarts + 1)
/// and a list of problems.
func checkWaveform(_ samples: [ReadbackSample], odr: Double, lsbPerDps: Double, cosine: Bool = false) -> (segments: Int, problems: [String]) {
    var problems: [String] = []
    var segments = 0
    var offset: Int64?
    var previous: (index: Int64, n: Int64)?
    for sample in samples {
        let n = Int64((sample.x * lsbPerDps).rounded())
        let phase = 2 * Double.pi * Double(n) / odr
        let y = (10000 * (cosine ? cos(phase) : sin(phase))).rounded(.toNearestOrEven) / lsbPerDps
        if abs(sample.y - y) > 1e-3 || abs(sample.z + Double(n) / lsbPerDps) > 1e-3 {
            problems.append("index \(sample.index): values (\(sample.x), \(sample.y), \(sample.z)) are not n = \(n)")
        }
        if let previous, sample.index <= previous.index { problems.append("index \(sample.index) after \(previous.index): duplicate or disorder") }
        if previous == nil || n < previous!.n { segments += 1; offset = sample.index - n }
        else if sample.index - n != offset {
            problems.append("index \(sample.index) carries n = \(n): \(sample.index - n - offset!) off")
            offset = sample.index - n
        }
        previous = (sample.index, n)
        if problems.count > 10 { break }
    }
    return (segments, problems)
}

/// How far stamps stray from an even 1/ODR spacing. Each segment (one run of the board's counter)
/// gets the 1/ODR grid whose phase fits it best: the acceptance asks for evenly spaced stamps, and
/// which instant the grid passes through is the clock's unobservable latency offset (see
/// SampleClock), so the segment's first stamp has no claim to sit exactly on it.
struct SpacingReport: CustomStringConvertible {
    /// Largest distance (ms) of a stamp from its segment's best grid: half the spread of the
    /// stamps' offsets from any one 1/ODR grid.
    var worstMs = 0.0
    /// Segment (1-based) where it occurs, its length (s) and the spread's ends (ms, relative to the
    /// grid through the segment's first stamp).
    var segment = 0
    var segmentSeconds = 0.0
    var lowest = 0.0, highest = 0.0

    var description: String {
        "worst \(worstMs) ms in segment \(segment) (\(segmentSeconds) s long; offsets from the grid through its first stamp \(lowest)...\(highest) ms)"
    }
}

func spacingReport(_ samples: [ReadbackSample], odr: Double, lsbPerDps: Double) -> SpacingReport {
    var report = SpacingReport()
    var current = SpacingReport()
    var origin: (index: Int64, ms: Double, n: Int64)?
    func close() {
        current.worstMs = (current.highest - current.lowest) / 2
        if current.worstMs > report.worstMs { report = current }
    }
    for sample in samples {
        let n = Int64((sample.x * lsbPerDps).rounded())
        if origin == nil || n < origin!.n {
            if origin != nil { close() }
            origin = (sample.index, sample.timestampMs, n)
            current = SpacingReport(segment: current.segment + 1)
        }
        let offset = sample.timestampMs - (origin!.ms + Double(sample.index - origin!.index) * 1000 / odr)
        current.lowest = min(current.lowest, offset)
        current.highest = max(current.highest, offset)
        current.segmentSeconds = (sample.timestampMs - origin!.ms) / 1000
        origin!.n = n
    }
    close()
    return report
}

/// Checks every place where the board's counter restarted (a re-initialisation): the indices the
/// store skipped there must equal the samples the peer's runs produced and never delivered, from
/// after the last stored sample of one run to the first stored sample of the next (runs that sent
/// nothing count whole). `runs` is the peer's `gyro_runs`; the last run's tail (after the last
/// stored sample) is not checked: the gateway stopped it.
func checkRestarts(_ samples: [ReadbackSample], runs: [[String: Any]], lsbPerDps: Double) -> [String] {
    struct Segment { var firstIndex: Int64, lastIndex: Int64, firstN: Int64, lastN: Int64 }
    var segments: [Segment] = []
    for sample in samples {
        let n = Int64((sample.x * lsbPerDps).rounded())
        if let last = segments.last, n > last.lastN {
            segments[segments.count - 1].lastIndex = sample.index
            segments[segments.count - 1].lastN = n
        } else {
            segments.append(Segment(firstIndex: sample.index, lastIndex: sample.index, firstN: n, lastN: n))
        }
    }
    let generated = runs.map { Int64($0["generated"] as? Int ?? 0) }
    let delivering = runs.indices.filter { (runs[$0]["sent"] as? Int ?? 0) > 0 }
    guard delivering.count == segments.count else {
        return ["\(segments.count) stored runs of the board's counter, but the peer's runs that sent samples are \(delivering.count): \(runs)"]
    }
    var problems: [String] = []
    for k in segments.indices.dropLast() {
        let (before, after) = (delivering[k], delivering[k + 1])
        let skipped = (before + 1..<after).reduce(Int64(0)) { $0 + generated[$1] }
        let truth = (generated[before] - 1 - segments[k].lastN) + skipped + segments[k + 1].firstN
        let recorded = segments[k + 1].firstIndex - segments[k].lastIndex - 1
        if recorded != truth {
            problems.append("restart after index \(segments[k].lastIndex): \(recorded) recorded missing, the board lost \(truth)")
        }
    }
    return problems
}
