import PosixThreads

/// When the data plane's loop may batch its reads, and why. The loop only counts holds
/// (`ThreadExecutor.allowPacedReads()`, `ThreadExecutor.holdPromptReads()`); the reasons are
/// MetaWear's and the supervisor's, so they are decided here.
///
/// Why reads may wait: a MetaWear time accounter stamps every gyro sample with the board's clock,
/// so a notification that waits in the socket for an interval keeps its time, and one wake-up
/// then handles the interval's batch instead of one wake-up per notification. A sample stamped
/// on arrival (no accounter, or the accelerometer's stream, which has none) would take the wait
/// into its time, so only a stream whose every sample carries board time allows it.
///
/// Why reads must sometimes be prompt: a connection being set up and initialised waits for each
/// answer in turn, so a batched read would add an interval to every step; and a request's answer
/// is timed on arrival (the log clock's reading is the reference that places the log in host
/// time) or awaited by someone (the battery, a stale sample before a stop). Whatever waits like
/// that holds prompt reads while it lasts, and overrides any stream's allowance meanwhile.
enum ReadPacingPolicy {
    /// Whether a stream with `plan` may let the loop batch its reads: every sample of the
    /// sensor carries the board's time (the gyro through its accounter, no accelerometer).
    static func allowsPacing(_ plan: StreamingPlan, gyroAccounter: Bool) -> Bool {
        plan.gyro.boardTime && plan.accelerometer == nil && gyroAccounter
    }

    /// How long after a stream starts its connection's prompt reads end: the warm-up and one
    /// commit interval, so that a crash right after a stream starts loses at most a commit
    /// interval of samples, as without pacing.
    static func promptAfterStart(warmUp: Duration, commitInterval: Duration) -> Double {
        warmUp.seconds + commitInterval.seconds
    }

    /// Allows paced reads for a board-time stream while it is watched.
    static func allowForBoardTimeStream(on loop: ThreadExecutor) -> ThreadExecutor.PacedStreamHold {
        loop.allowPacedReads()
    }

    /// Holds prompt reads for one connection: from connecting through initialising and
    /// backfilling, until ``promptAfterStart(warmUp:commitInterval:)`` into its stream.
    static func holdForConnection(on loop: ThreadExecutor) -> ThreadExecutor.PromptReadHold {
        loop.holdPromptReads()
    }

    /// Runs `body`, something that awaits an answer from the board (a request, a stale
    /// sample), with prompt reads held: the answer's arrival time and its latency matter.
    static func awaitingAnswer<R>(
        on loop: ThreadExecutor, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> R
    ) async rethrows -> R {
        let hold = loop.holdPromptReads()
        do {
            let result = try await body()
            hold.release()
            return result
        } catch {
            hold.release()
            throw error
        }
    }
}
