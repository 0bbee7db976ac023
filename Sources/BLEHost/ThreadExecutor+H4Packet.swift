import HCI
import PosixThreads

extension ThreadExecutor {
    /// ``PosixThreads/ThreadExecutor/entry(into:_:)`` for a transport's packets, with the
    /// argument's type spelled out: a generic argument is passed indirectly, so each call through
    /// the generic entry converts to that convention and back (two reabstraction thunks per packet).
    @inlinable
    public func entry<A: Actor>(into _: A.Type, _ body: @escaping @Sendable (isolated A, H4Packet) -> Void)
        -> @Sendable (A, H4Packet) -> Void
    {
        let call = unsafeBitCast(body, to: (@Sendable (A, H4Packet) -> Void).self)
        return { [self] actor, packet in
            checkIsolated()
            call(actor, packet)
        }
    }
}
