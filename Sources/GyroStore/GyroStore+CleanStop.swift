extension GyroStore {
    /// What a clean stop did to the WAL (``endRun()``).
    public struct CleanStop: Sendable, Equatable {
        /// Frames of the WAL's cycle, every one of them now in the database file.
        public var cycleFrames: Int
        /// Whether the WAL starts its next cycle: the next start's recovery reads a frame or
        /// two, not the last cycle's thousands.
        public var nextCycleStarted: Bool
    }

    /// At a clean stop, after the last write: copies the WAL into the database file, then starts
    /// the WAL's next cycle with one small commit (a count of clean stops).
    ///
    /// Why: the WAL is kept across starts (`WALFile`), and the next open's recovery takes every
    /// frame of its current cycle as not yet copied (SQLite keeps that count only in the `-shm`,
    /// which it rebuilds). A store closed after a checkpoint (the filler's) had its last cycle
    /// written again at the next start, 6.1 MB of scattered pages; the gateway, which exits
    /// without closing, left its last run's frames in the WAL only (docs/benchmarks-store.md).
    /// After this, the file holds everything, and the current cycle is the one small commit; the
    /// cycle before, which follows it in the file, is what the open's `CheckpointCheck` compares
    /// with the database file: all of it but its first frames.
    ///
    /// A reader still in a transaction keeps the WAL from starting again: the stop then ends
    /// as before, no worse. A store found damaged is left alone.
    public func endRun() async throws -> CleanStop {
        try await writeWithoutTransaction { db in
            let restart = try db.first("PRAGMA wal_checkpoint(RESTART)") { (busy: try $0.int(0), frames: try $0.int(1)) }
            guard let restart, restart.busy == 0 else {
                return CleanStop(cycleFrames: max(restart?.frames ?? 0, 0), nextCycleStarted: false)
            }
            try db.transaction(.immediate) {
                try db.run("INSERT INTO counter (name, value) VALUES ('store.cleanStops', 1) ON CONFLICT (name) DO UPDATE SET value = value + 1")
            }
            // The small commit checkpointed too, so that the file is complete without the WAL.
            let frames = try db.first("PRAGMA wal_checkpoint(PASSIVE)") { try $0.int(1) } ?? -1
            return CleanStop(cycleFrames: restart.frames, nextCycleStarted: frames >= 0 && frames < restart.frames)
        }
    }
}
