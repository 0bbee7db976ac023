// `store-filler gaps DIR DEVICE [--days 7] [--runs 5]`: the lookup a backfill starts with,
// GyroStore.fillableGaps (the gaps of the device's sessions of the last 7 days, what
// CaptureEngine.fillableGaps asks for before a log download and after it), timed on the
// store's own reader: the first run cold as the store finds it, then the median of the rest.
//
// prints `GAPS first=…ms median=…ms gaps=… device=…`
import FoundationEssentials
import GyroStore
import Logging

enum GapLookup {
    static func run(_ arguments: [String], logger: Logger) async throws {
        guard arguments.count >= 2 else { throw Usage.bad("store-filler gaps DIR DEVICE [--days N] [--runs N]") }
        var days = 7.0, runs = 5
        var rest = arguments.dropFirst(2)
        while let flag = rest.popFirst(), let value = rest.popFirst() {
            switch flag {
            case "--days": days = Double(value) ?? days
            case "--runs": runs = max(1, Int(value) ?? runs)
            default: throw Usage.bad("store-filler gaps DIR DEVICE [--days N] [--runs N]")
            }
        }
        let store = try GyroStore.open(directory: arguments[0], logger: logger)
        let since = Date().timeIntervalSince1970 * 1000 - days * 86_400_000
        var times: [Double] = [], found = 0
        for _ in 0..<runs {
            let started = ContinuousClock.now
            found = try await store.fillableGaps(device: arguments[1], stream: "gyro", sinceMs: since).count
            times.append(Double((ContinuousClock.now - started) / .microseconds(1)) / 1000)
        }
        let rest2 = times.dropFirst().sorted()
        let median = rest2.isEmpty ? times[0] : rest2[rest2.count / 2]
        print("GAPS first=\(fixed(times[0], 2))ms median=\(fixed(median, 2))ms gaps=\(found) device=\(arguments[1])")
    }
}
