// `store-filler retention DIR --limit SIZE [--batch-chunks N]`: one retention pass of the
// store's own retention batches (what capture runs every 30 s) with retention.maxStoreBytes SIZE,
// timed, transaction by transaction; the session documents it rewrites for evicted chunks are the
// engine's renderings. `--batch-chunks 0`: the whole pass in one transaction, as before batches.
//
// prints `RETENTION seconds=… usedBefore=… usedAfter=… pruned=… evicted=… limit=… transactions=…
// longestTransaction=…`
import Capture
import FoundationEssentials
import GyroStore
import Logging

enum RetentionPass {
    static func run(_ arguments: [String], logger: Logger) async throws {
        let usage = Usage.bad("store-filler retention DIR --limit SIZE [--batch-chunks N]")
        guard arguments.count == 3 || arguments.count == 5, arguments[1] == "--limit", let limit = try? FillOptions.size(arguments[2]) else {
            throw usage
        }
        var batchChunks = RetentionProgress.defaultBatchChunks
        if arguments.count == 5 {
            guard arguments[3] == "--batch-chunks", let chunks = Int(arguments[4]), chunks >= 0 else { throw usage }
            batchChunks = chunks == 0 ? Int.max : chunks
        }
        let store = try GyroStore.open(directory: arguments[0], maxBytes: limit, logger: logger)
        let before = try await store.usedBytes()
        let renderer = DocumentRenderer()
        var pass = RetentionProgress(batchChunks: batchChunks)
        var longest = Duration.zero
        let started = ContinuousClock.now
        while !pass.isDone {
            let batchStarted = ContinuousClock.now
            _ = try await store.retentionBatch(&pass, sessionDocuments: { renderer.sessionDocuments($0) })
            longest = max(longest, ContinuousClock.now - batchStarted)
        }
        let report = pass.report
        print("RETENTION seconds=\(fixed(seconds(ContinuousClock.now - started), 3)) usedBefore=\(before) usedAfter=\(report.usedBytes) "
              + "pruned=\(report.prunedChunks) evicted=\(report.evictedUnpublishedChunks) limit=\(report.limit.bytes) "
              + "transactions=\(report.transactions) longestTransaction=\(fixed(seconds(longest), 3))")
        // Stopped as the gateway stops (after the timing): the next open does not copy the pass's WAL cycle again.
        _ = try await store.endRun()
    }

    static func seconds(_ duration: Duration) -> Double { Double(duration / .microseconds(1)) / 1e6 }
}
