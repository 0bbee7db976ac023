import Capture
import GyroStore
import Logging
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
                    try await group.next()
                    group.cancelAll()
                }
            }
        } catch is CancellationError {}
        await engine.ingestFeed()
        for session in await engine.openSessions() {
            _ = try? await engine.stopSession(device: session.device, reason: "gateway stopping")
        }
        try await engine.flush()
    }

    /// Checks the store's size every 30 seconds (and right away), pruning published chunks
    /// (and, when only unpublished ones are left, evicting them as gaps of their sessions).
    private func enforceRetention() async throws {
        while !Task.isCancelled {
            let report = try await engine.enforceRetention()
            if report.prunedChunks > 0 || report.evictedUnpublishedChunks > 0 {
                logger.notice("retention", metadata: ["subsystem": "store", "pruned": "\(report.prunedChunks)",
                                                      "evicted": "\(report.evictedUnpublishedChunks)", "usedBytes": "\(report.usedBytes)"])
            }
            try await Task.sleep(for: .seconds(30))
        }
    }
}
