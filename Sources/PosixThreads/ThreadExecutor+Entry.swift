extension ThreadExecutor {
    /// A call into `A`'s isolation for a characteristic's values, which arrive on this executor's
    /// thread from its reader: made once when the subscriber is installed, then called once per
    /// value. `A` must run on this executor (its `unownedExecutor` is this one's).
    ///
    /// Why not `Actor.assumeIsolated` per value: it wraps its closure with
    /// `withoutActuallyEscaping`, which allocates on every call, and its executor check, called
    /// outside any job, takes the runtime's slow path; together several times the rest of an
    /// actor's share of a notification (docs/benchmarks.md, "Entering the actors"). This does
    /// the same check (the caller is on the thread, which is `A`'s executor) and the same
    /// reinterpretation of the isolated parameter, on a closure made once.
    @inlinable
    public func entry<A: Actor>(into _: A.Type, _ body: @escaping @Sendable (isolated A, ArraySlice<UInt8>) -> Void)
        -> @Sendable (A, ArraySlice<UInt8>) -> Void
    {
        // The isolated parameter is an ordinary parameter in the calling convention; the stdlib's
        // `assumeIsolated` relies on the same.
        let call = unsafeBitCast(body, to: (@Sendable (A, ArraySlice<UInt8>) -> Void).self)
        return { [self] actor, value in
            checkIsolated()
            call(actor, value)
        }
    }
}
