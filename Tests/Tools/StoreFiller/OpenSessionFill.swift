// `--open-session DEVICE --chunks N`: one session left open, as a crash or a power cut leaves
// it, written through the capture engine itself: N closed chunks of `--chunk-size` points and
// an open one holding half a chunk in the sample ring, its last sample a few seconds ago. A
// gateway started on the store continues it when that device has `backfill` in its config
// (CaptureEngine.recover(continuing:)), and closes it otherwise. Its documents are published
// (their outbox rows acknowledged), as a running gateway's would be.
//
// The session is back-dated so that it ends now: N chunks at `--hz` from its start. The
// gateway splits a session at sessions.maxDurationMinutes (240 by default): a longer one needs
// that raised in the gateway's config to be continued.
import SupportCore
import Capture
import FoundationEssentials
import GyroStore
import Logging
import MetaWear

enum OpenSessionFill {
    static func run(_ options: FillOptions, device: String, store: GyroStore, calendar: PeriodCalendar, outbox: OutboxRows,
                    logger: Logger) async throws -> SessionRecord {
        let lastSeq = outbox.lastSeq()
        let rules = CaptureRules(chunkSize: options.chunkSize, commitInterval: .seconds(1), maxDurationMs: 1e12)
        let engine = CaptureEngine(store: store, rules: rules, calendar: calendar, logger: logger)
        let sensor = SensorIdentity(device: device, userId: options.openUser)
        let total = Int64(options.openChunks * options.chunkSize + options.chunkSize / 2)
        let period = 1000 / options.hz
        let startMs = (Date().timeIntervalSince1970 * 1000).rounded() - Double(total) * period - 5000
        let session = try await engine.startSession(sensor: sensor, atMs: startMs)
        let units = SampleDecoder(gyroRange: .dps2000).unitsPerLSB
        var rng = SplitMix64(seed: options.seed &+ 7)
        var motion = Motion(phase: rng.next(), hz: options.hz)
        var index: Int64 = 0
        while index < total {
            let count = Int(min(Int64(options.chunkSize), total - index))
            var batch: [StoredSample] = []
            batch.reserveCapacity(count)
            for offset in 0..<count {
                let (x, y, z) = motion.counts(at: index + Int64(offset), rng: &rng)
                batch.append(StoredSample(timestampMs: startMs + Double(index + Int64(offset)) * period, x: Float(Double(x) * units),
                                          y: Float(Double(y) * units), z: Float(Double(z) * units)))
            }
            try await engine.append(sensor: sensor, stream: .gyro, odrHz: options.hz, range: 2000, firstIndex: index, samples: batch)
            index += Int64(count)
        }
        try await engine.flush()
        try await store.acknowledge(try outbox.rows(after: lastSeq).map(\.seq))
        return try await store.session(id: session.id) ?? session
    }
}
