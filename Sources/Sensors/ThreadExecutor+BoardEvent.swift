import BLEHost
import PosixThreads

extension ThreadExecutor {
    /// ``PosixThreads/ThreadExecutor/entry(into:_:)`` for a board's events, with the argument's type
    /// spelled out: through the generic one, every event passes two reabstraction thunks.
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
