extension ThreadExecutor {
    /// A call into `A`'s isolation for a callback that runs on this executor's thread (a
    /// transport's reader, a notification subscriber): made once when the callback is installed, then called
    /// once per packet.
    ///
    /// Why not `Actor.assumeIsolated` per packet: it wraps its closure with
    /// `withoutActuallyEscaping`, which allocates on every call, and its executor check, called
    /// from a descriptor's handler (outside any job), takes the runtime's slow path (is the main
    /// executor current, then this executor's `isIsolatingCurrentContext`), several times the
    /// rest of an actor's share of a notification (docs/benchmarks.md, "Entering the actors").
    /// This does the same check (the caller is on the thread, which is `A`'s executor) and the
    /// same reinterpretation of the isolated parameter, on a closure made once. `A` must run on
    /// this executor (its `unownedExecutor` is this one's).
    @inlinable
    public func entry<A: Actor, Argument>(into _: A.Type,
                                          _ body: @escaping @Sendable (isolated A, Argument) -> Void)
        -> @Sendable (A, Argument) -> Void
    {
        // The isolated parameter is an ordinary parameter in the calling convention; the stdlib's
        // `assumeIsolated` relies on the same.
        let call = unsafeBitCast(body, to: (@Sendable (A, Argument) -> Void).self)
        return { [self] actor, argument in
            checkIsolated()
            call(actor, argument)
        }
    }
}

extension ThreadExecutor {
    /// ``entry(into:_:)`` for a characteristic's values, with the argument's type spelled out
    /// (a generic argument is passed indirectly, so each call through the generic entry
    /// converts to that convention and back: two reabstraction thunks).
    @inlinable
    public func entry<A: Actor>(into _: A.Type, _ body: @escaping @Sendable (isolated A, ArraySlice<UInt8>) -> Void)
        -> @Sendable (A, ArraySlice<UInt8>) -> Void
    {
        let call = unsafeBitCast(body, to: (@Sendable (A, ArraySlice<UInt8>) -> Void).self)
        return { [self] actor, value in
            checkIsolated()
            call(actor, value)
        }
    }
}
