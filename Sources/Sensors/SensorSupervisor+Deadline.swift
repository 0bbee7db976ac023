import PosixThreads

extension SensorSupervisor {
    /// Runs one initialisation of `board` (``initialiseAndStart(_:)``) under
    /// ``SupervisorSettings/initialisationDeadline``, times the answer timeouts' scale.
    ///
    /// Every step of an initialisation has its own timeout (an answer's, ATT's 30 s, a
    /// connection update's 10 s), so the deadline is a net under them: a step that waits for
    /// something none of them covers would otherwise hold the sensor in `initialising` for ever
    /// without a word, which a field gateway must never do. Past the deadline the steps are
    /// cancelled and left behind, and ``BoardError/initialisationStuck(step:after:)`` names what
    /// they were waiting for; the caller drops the link, which also ends whatever they wait on.
    func initialiseWithinDeadline(_ board: MetaWearBoard) async throws {
        initialisationTurn += 1
        let turn = initialisationTurn
        let deadline = settings.initialisationDeadline * timeoutScale
        // A timer of the loop, which this supervisor runs on: it settles the turn on the loop.
        let alarm = loop.makeAlarm()
        loop.schedule(after: deadline.seconds, tolerance: deadline.seconds / 16, alarm: alarm) {
            self.assumeIsolated { $0.settleInitialisation(turn, nil) }
        }
        defer { loop.cancel(alarm) }
        // The steps run in a task of their own, so that the deadline need not wait for them; a
        // cancelled supervisor (the gateway stopping) cancels them, as when they ran in its own
        // task, and goes on at once.
        let work = Task {
            do {
                try await self.initialiseAndStart(board)
                self.settleInitialisation(turn, .success(()))
            } catch {
                self.settleInitialisation(turn, .failure(error))
            }
        }
        let outcome = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if let early = earlyInitialisationOutcome, early.turn == turn {
                    continuation.resume(returning: early.outcome)
                } else {
                    initialisationWaiter = (turn, continuation)
                }
            }
        } onCancel: {
            // Not waiting for steps that may never end: the caller closes the board and the link.
            work.cancel()
            self.loop.execute { self.assumeIsolated { $0.settleInitialisation(turn, .failure(CancellationError())) } }
        }
        earlyInitialisationOutcome = nil
        guard let outcome else {
            work.cancel()
            throw BoardError.initialisationStuck(step: await board.step, after: deadline)
        }
        try outcome.get()
    }

    /// Ends turn `turn` of ``initialiseWithinDeadline(_:)`` with `outcome`, or with nil when its
    /// deadline passed; whichever comes second, and a late one of an older turn, does nothing.
    func settleInitialisation(_ turn: Int, _ outcome: Result<Void, any Error>?) {
        guard turn == initialisationTurn, settledInitialisationTurn != turn else { return }
        settledInitialisationTurn = turn
        if let waiter = initialisationWaiter, waiter.turn == turn {
            initialisationWaiter = nil
            waiter.continuation.resume(returning: outcome)
        } else {
            // Before the turn began to wait (its steps ran first): kept for it.
            earlyInitialisationOutcome = (turn, outcome)
        }
    }
}
