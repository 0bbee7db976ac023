import BLEHost
import PosixThreads

extension ThreadExecutor {
    /// ``PosixThreads/ThreadExecutor/entry(into:_:)`` for a board's events (one per notification,
    /// so `Actor.assumeIsolated` would cost several times the event's handling).
    func entry<A: Actor>(into _: A.Type, _ body: @escaping @Sendable (isolated A, BoardEvent) -> Void)
        -> @Sendable (A, BoardEvent) -> Void
    {
        let call = unsafeBitCast(body, to: (@Sendable (A, BoardEvent) -> Void).self)
        return { [self] actor, event in
            checkIsolated()
            call(actor, event)
        }
    }
}
