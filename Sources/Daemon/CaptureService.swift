import Capture
import GyroStore
import HostTime
import Logging
import PosixThreads
import ServiceLifecycle

/// Runs the capture timers and retention; on graceful shutdown, closes open sessions so that
/// their partial chunks are committed as documents.
struct CaptureService: Service {
    let engine: CaptureEngine
    let logger: Logger

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await engine.run() }
                    group.addTask { try await enforceRetention() }
                    if let clock = engine.clock { group.addTask { try await followRedatings(of: clock) } }
                    try await group.next()
                    group.cancelAll()
                }
            }
        } catch is CancellationError {}
        await engine.ingestFeed()
        for session in await engine.openSessions() {
            _ = try? await engine.stopSession(device: session.device, reason: "gateway stopping")
        }
        do { try await engine.flush() } catch let error as StoreError where error.isFull {
            // Exiting with an error would only get the gateway restarted onto the same full disk.
            logger.critical("stopping with the disk full: the last samples could not be stored",
                            metadata: ["subsystem": "store", "error": "\(error)"])
        }
    }

    /// Hands each re-dating of the gateway's clock to the engine, in order; one that fails (the
    /// disk full, say) is tried again until it is applied, since every later one builds on it.
    /// Returns only when cancelled: the group ends when any of its tasks does.
    private func followRedatings(of clock: GatewayClock) async throws {
        for await redating in clock.redatings {
            while true {
                do {
                    try await engine.redate(redating)
                    break
                } catch {
                    logger.error("re-dating failed; trying again in 5 s", metadata: ["subsystem": "capture", "error": "\(error)"])
                    try await Task.sleep(for: .seconds(5))
                }
            }
        }
        while true { try await Task.sleep(for: .seconds(3600)) }
    }

    /// Checks the store's size every 30 seconds (and right away), pruning published chunks
    /// (and, when only unpublished ones are left, evicting them as gaps of their sessions).
    ///
    /// On the writer's thread, which the pass runs on anyway, and woken by that thread's alarm:
    /// a `Task.sleep` would wake two dispatch threads each time, and the task would hop from
    /// the global executor to the writer and back around each pass.
    private func enforceRetention() async throws {
        let writer = engine.store.writerExecutor
        try await withTaskExecutorPreference(writer) { try await retentionPasses(sleepingOn: writer) }
    }

    private func retentionPasses(sleepingOn writer: ThreadExecutor) async throws {
        while !Task.isCancelled {
            do {
                let report = try await engine.enforceRetention()
                if report.prunedChunks > 0 || report.evictedUnpublishedChunks > 0 {
                    logger.notice("retention", metadata: ["subsystem": "store", "pruned": "\(report.prunedChunks)",
                                                          "evicted": "\(report.evictedUnpublishedChunks)", "usedBytes": "\(report.usedBytes)"])
                }
            } catch {
                // A pass that fails (the disk full, say) is tried again; it must not stop capture.
                logger.error("retention failed", metadata: ["subsystem": "store", "error": "\(error)"])
            }
            try await writer.sleep(for: .seconds(30))
        }
    }
}
