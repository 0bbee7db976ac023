// A child process for the crash tests: opens the store in DIR, closes what the previous
// (killed) run left open, then feeds one session of synthetic gyro samples forever.
// After every commit it prints `ACK <session id> <samples committed>`; the parent kills it
// with SIGKILL at random points and checks the store.
//
// usage: store-feeder DIR CHUNK_SIZE
import Capture
import Foundation
import GyroStore
import Logging

let arguments = CommandLine.arguments
guard arguments.count == 3, let chunkSize = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: store-feeder DIR CHUNK_SIZE\n".utf8))
    exit(64)
}
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
var logger = Logger(label: "store-feeder")
logger.logLevel = .error
let store = try GyroStore.open(directory: arguments[1], logger: logger)
let engine = CaptureEngine(store: store, rules: CaptureRules(chunkSize: chunkSize, commitInterval: .milliseconds(20)),
                           calendar: PeriodCalendar(timeZone: .utc), logger: logger)
_ = try await engine.recover()
let sensor = SensorIdentity(device: "C4:BE:84:00:00:01", userId: "crash")
let t0 = (Date().timeIntervalSince1970 * 1000).rounded()
let session = try await engine.startSession(sensor: sensor, atMs: t0)
say("START \(session.id) \(t0)")
var index: Int64 = 0
while true {
    for _ in 0..<5 {
        let batch = (0..<37).map { offset -> StoredSample in
            let i = index + Int64(offset)
            return StoredSample(timestampMs: t0 + Double(i) * 20, x: Float(i % 100_000), y: -Float(i % 100_000), z: 0.5)
        }
        try await engine.append(sensor: sensor, stream: .gyro, odrHz: 50, range: 2000, firstIndex: index, samples: batch)
        index += 37
    }
    try await engine.flush()
    say("ACK \(session.id) \(index)")
}
