import GyroStore

/// Whether the store takes writes, and whether it is losing unpublished data to make room.
public enum StoreCondition: Sendable, Equatable {
    case writable
    /// The disk has no room for what the store holds, since `sinceMs` (epoch ms): a commit
    /// failed for want of space, or retention evicted unpublished data because the disk had no
    /// room for it. `reason` says which (the store's error, or the disk's figures).
    case full(sinceMs: Double, reason: String)
    /// The store reached `retention.maxStoreBytes` (`limitBytes`) with nothing published left
    /// to prune, since `sinceMs`: retention evicts the oldest unpublished chunks as storeFull
    /// gaps although the disk has room. Not a disk problem: the broker is away, or the limit
    /// is too small for how long it stays away.
    case atLimit(sinceMs: Double, limitBytes: Int)

    public var isFull: Bool {
        if case .full = self { return true }
        return false
    }

    public var isAtLimit: Bool {
        if case .atLimit = self { return true }
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
/// beyond become storeFull gaps as they arrive. A retention pass that evicts unpublished data
/// because the disk has no room enters the same state, though no commit failed: data is being
/// lost for want of disk, and the status must say so. After a commit (or a retention pass that
/// evicts nothing), once the disk has room for the reserve and as much again, the store is
/// writable again.
extension CaptureEngine {
    /// After a commit failed for want of space, with the commit lock held: enters the full state
    /// (once), frees the reserve and makes room.
    func storeFilled(_ error: StoreError) async {
        enterFull(reason: "\(error)")
        store.reserve?.release()
        await makeRoom()
    }

    /// Retention against the space the disk really has, with the commit lock held.
    func makeRoom() async {
        do {
            let report = try await enforceRetentionLocked()
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

    /// The condition a retention pass leaves: full when it evicted unpublished data for want of
    /// disk, at its limit when `maxStoreBytes` made it evict, writable again when an at-limit
    /// store no longer needed to evict.
    func noteRetention(_ report: RetentionReport) {
        if report.evictedForLackOfDisk {
            let samples = report.evictions.reduce(0) { $0 + $1.samples }
            enterFull(reason: "retention evicted \(report.evictedUnpublishedChunks) unpublished chunks (\(samples) samples) because the disk "
                + "has no room for them: \(report.limit.diskRoomBytes.map { "\($0)" } ?? "?") bytes of room beyond the \(store.reserveBytes)-byte reserve; "
                + "free space on that filesystem or move dataDirectory to a larger one")
        } else if report.evictedUnpublishedChunks > 0 {
            // Full stays full until the disk has room: the disk is the worse of the two.
            guard case .writable = storeCondition else { return }
            storeCondition = .atLimit(sinceMs: now(), limitBytes: report.limit.bytes)
            logger.warning("store at retention.maxStoreBytes with nothing published to prune: the oldest unpublished chunks are evicted as storeFull gaps", metadata: [
                "subsystem": "store", "limitBytes": "\(report.limit.bytes)", "evicted": "\(report.evictedUnpublishedChunks)",
                "fix": "bring the broker back, or raise retention.maxStoreBytes",
            ])
        } else if storeCondition.isAtLimit {
            storeCondition = .writable
            logger.notice("store under retention.maxStoreBytes again without evicting unpublished data", metadata: ["subsystem": "store"])
        }
    }

    /// Enters the full state, once per episode.
    private func enterFull(reason: String) {
        guard !storeCondition.isFull else { return }
        storeCondition = .full(sinceMs: now(), reason: reason)
        counters.storeFullEpisodes += 1
        logger.critical("store full: freeing space; samples that cannot be kept become storeFull gaps", metadata: [
            "subsystem": "store", "reason": "\(reason)", "free": "\(store.space().map { "\($0.freeBytes)" } ?? "?")",
        ])
    }

    /// After a commit that succeeded while full, or a retention pass that evicted nothing:
    /// writable again once the disk has room for the reserve and as much beside it, and the
    /// reserve is allocated again.
    func checkSpaceReturned() {
        guard storeCondition.isFull, let space = store.space() else { return }
        guard WorkingLimit.diskHasRoomAgain(space, reserveBytes: store.reserveBytes), store.reserve?.fill() ?? true else { return }
        storeCondition = .writable
        logger.notice("store writable again", metadata: ["subsystem": "store", "free": "\(space.freeBytes)"])
    }
}
