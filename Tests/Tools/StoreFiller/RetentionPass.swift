// `store-filler retention DIR --limit SIZE`: one retention pass of the store's own
// enforceRetention (what capture runs every 30 s) with retention.maxStoreBytes SIZE, timed;
// the session documents it rewrites for evicted chunks are the engine's renderings.
//
// prints `RETENTION seconds=… usedBefore=… usedAfter=… pruned=… evicted=… limit=…`
import Capture
import FoundationEssentials
import GyroStore
import Logging

enum RetentionPass {
    static func run(_ arguments: [String], logger: Logger) async throws {
        guard arguments.count == 3, arguments[1] == "--limit", let limit = try? FillOptions.size(arguments[2]) else {
            throw Usage.bad("store-filler retention DIR --limit SIZE")
        }
        let store = try GyroStore.open(directory: arguments[0], maxBytes: limit, logger: logger)
        let before = try await store.usedBytes()
        let renderer = DocumentRenderer()
        let started = ContinuousClock.now
        let report = try await store.enforceRetention(sessionDocuments: { renderer.sessionDocuments($0) })
        let seconds = Double((ContinuousClock.now - started) / .microseconds(1)) / 1e6
        print("RETENTION seconds=\(fixed(seconds, 3)) usedBefore=\(before) usedAfter=\(report.usedBytes) "
              + "pruned=\(report.prunedChunks) evicted=\(report.evictedUnpublishedChunks) limit=\(report.limit.bytes)")
    }
}
