import GyroStore

/// Whether the store takes writes.
public enum StoreCondition: Sendable, Equatable {
    case writable
    /// The disk filled up at `sinceMs` (epoch ms); `reason` is the store's error.
    case full(sinceMs: Double, reason: String)

    public var isFull: Bool {
        if case .full = self { return true }
        return false
    }
}

/// Disk full is a state, not a stream of errors.
///
/// When a commit fails for want of space, the engine releases the store's reserve (room for the
/// next writes), runs retention against what the disk really has (``GyroStore/workingLimit()``:
/// published chunks pruned first, then the oldest unpublished ones evicted as storeFull gaps) and
/// tries the commit again. While full, every commit is preceded by that retention pass, and a
/// failed commit's samples wait in memory up to ``CaptureRules/fullBufferSamples``; samples
/// beyond become storeFull gaps as they arrive. After a commit, once the disk has room for the
/// reserve again, the store is writable again.
extension CaptureEngine {
    /// After a commit failed for want of space, with the commit lock held: enters the full state
    /// (once), frees the reserve and makes room.
    func storeFilled(_ error: StoreError) async {
        if !storeCondition.isFull {
            storeCondition = .full(sinceMs: now(), reason: "\(error)")
            counters.storeFullEpisodes += 1
            logger.critical("store full: freeing space; samples that cannot be kept become storeFull gaps", metadata: [
                "subsystem": "store", "error": "\(error)", "free": "\(store.space().map { "\($0.freeBytes)" } ?? "?")",
            ])
        }
        store.reserve?.release()
        await makeRoom()
    }

    /// Retention against the space the disk really has, with the commit lock held.
    func makeRoom() async {
        do {
            let report = try await enforceRetentionLocked(limit: store.workingLimit())
            if report.prunedChunks > 0 || report.evictedUnpublishedChunks > 0 {
                logger.notice("store full: made room", metadata: [
                    "subsystem": "store", "pruned": "\(report.prunedChunks)", "evicted": "\(report.evictedUnpublishedChunks)",
                    "usedBytes": "\(report.usedBytes)",
                ])
            }
        } catch {
            logger.error("store full: retention failed", metadata: ["subsystem": "store", "error": "\(error)"])
        }
    }

    /// After a commit that succeeded while full: writable again once the disk has room for the
    /// reserve and the working limit is no tighter than the configured one.
    func checkSpaceReturned() {
        guard storeCondition.isFull, let space = store.space() else { return }
        let reserve = store.reserve?.bytes ?? 0
        guard space.freeBytes >= 2 * reserve, store.reserve?.fill() ?? true else { return }
        storeCondition = .writable
        logger.notice("store writable again", metadata: ["subsystem": "store", "free": "\(space.freeBytes)"])
    }
}
