// The original mode: one closed session of synthetic gyro samples through the capture engine,
// as a long capture would: for the export's memory benchmark (docs/benchmarks.md, "Export").
//
// usage: store-filler DIR MINUTES HZ [DEVICE]
// prints `SESSION <id> <samples>` when the session is closed.
import Capture
import FoundationEssentials
import GyroStore
import Logging

enum OneSession {
    static func run(_ arguments: [String], logger: Logger) async throws {
        guard arguments.count >= 3, let minutes = Double(arguments[1]), let hz = Double(arguments[2]), minutes > 0, hz > 0 else {
            throw Usage.bad("store-filler DIR MINUTES HZ [DEVICE]")
        }
        let store = try GyroStore.open(directory: arguments[0], logger: logger)
        let engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: 2000, commitInterval: .milliseconds(1000)),
                                   calendar: PeriodCalendar(timeZone: .utc), logger: logger)
        let sensor = SensorIdentity(device: arguments.count > 3 ? arguments[3] : "C4:BE:84:00:00:09", userId: "filler")
        let t0 = (Date().timeIntervalSince1970 * 1000).rounded() - minutes * 60_000
        let session = try await engine.startSession(sensor: sensor, atMs: t0)
        let total = Int64(minutes * 60 * hz)
        var index: Int64 = 0
        while index < total {
            let count = Int(min(4000, total - index))
            let batch = (0..<count).map { offset -> StoredSample in
                let i = index + Int64(offset)
                // Whole counts of the 2000 deg/s range (1/16.4 deg/s), as a board's samples are.
                let x = Float(Double(i % 2000 - 1000) / 16.4)
                return StoredSample(timestampMs: t0 + Double(i) * 1000 / hz, x: x, y: -x, z: Float(Double(i % 7) / 16.4))
            }
            try await engine.append(sensor: sensor, stream: .gyro, odrHz: hz, range: 2000, firstIndex: index, samples: batch)
            try await engine.flush()
            index += Int64(count)
        }
        let closed = try await engine.stopSession(id: session.id)
        try await engine.flush()
        print("SESSION \(closed.id) \(index)")
    }
}
