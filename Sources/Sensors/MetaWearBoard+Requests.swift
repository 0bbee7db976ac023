import BLEHost
import MetaWear

extension MetaWearBoard {
    func request(_ command: MetaWearCommand, answer module: UInt8, _ register: UInt8, what: String,
                         timeout: Duration? = nil) async throws -> [UInt8]
    {
        if closed { throw BoardError.linkClosed }
        step = what
        let key = UInt16(module) << 8 | UInt16(register)
        return try await ReadPacingPolicy.awaitingAnswer(on: loop) {
            try await awaitAnswer(command, key: key, what: what, timeout: timeout ?? responseTimeout)
        }
    }

    private func awaitAnswer(_ command: MetaWearCommand, key: UInt16, what: String,
                             timeout: Duration) async throws -> [UInt8]
    {
        nextWaiterID += 1
        let id = nextWaiterID
        // A timer of the loop, not a sleeping task: a sleep's dispatch timer wakes two threads of
        // the global executor when it ends, even after the answer has cancelled it.
        // Strong (cancelled below when the answer comes): the board is referenced weakly nowhere,
        // see `initialise()`.
        let alarm = loop.makeAlarm()
        loop.schedule(after: timeout.seconds, tolerance: timeout.seconds / 16, alarm: alarm) { [board = self] in
            board.assumeIsolated { $0.fail(key: key, id: id, with: BoardError.timeout(what)) }
        }
        defer { loop.cancel(alarm) }
        return try await withCheckedThrowingContinuation { continuation in
            waiters[key] = Waiter(id: id, continuation: continuation)
            Task { [link] in
                do { try await link.write(command) } catch { self.fail(key: key, id: id, with: error) }
            }
        }
    }

    private func fail(key: UInt16, id: Int, with error: any Error) {
        guard let waiter = waiters[key], waiter.id == id else { return }
        waiters[key] = nil
        waiter.continuation.resume(throwing: error)
    }

    func linkEnded() {
        closed = true
        resumeStaleWaiter()
        download?.fail(BoardError.linkClosed)
        for (_, waiter) in waiters { waiter.continuation.resume(throwing: BoardError.linkClosed) }
        waiters = [:]
    }

    /// A board that streams the planned gyro configuration but whose samples have not arrived on
    /// this link yet (an initialisation can take less than a sample period): one is awaited for a
    /// few notification periods before the stop. Its stream then says exactly how many samples the
    /// board produced while the link was down, where the stop time says it only to within one.
    func awaitStaleSample(_ plan: StreamingPlan) async {
        guard staleGyroMatches, !staleGyroDelivered, !closed else { return }
        let wait = min(2 * Double(plan.gyro.samplesPerNotification) / plan.gyro.odrHz + 0.05, 0.5)
        let alarm = loop.makeAlarm()
        loop.schedule(after: wait, tolerance: wait / 16, alarm: alarm) { [board = self] in
            board.assumeIsolated { $0.resumeStaleWaiter() }
        }
        defer { loop.cancel(alarm) }
        await ReadPacingPolicy.awaitingAnswer(on: loop) {
            await withCheckedContinuation { staleWaiter = $0 }
        }
    }

    func resumeStaleWaiter() {
        staleWaiter.take()?.resume()
    }
}
