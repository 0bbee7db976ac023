extension ThreadExecutor {
    /// How often the thread reads its descriptors: at once, or at most once per interval.
    ///
    /// Why: each read of data that came alone costs a thread wake-up, which on a small machine
    /// costs far more than handling the data. Where data loses nothing by waiting in its
    /// descriptor for a while, reading once per interval lets each wake-up handle a batch. The
    /// thread cannot tell when that is; its users say so with values: a
    /// ``ThreadExecutor/PacedStreamHold`` allows paced reads, a ``ThreadExecutor/PromptReadHold``
    /// forbids them while it lasts. The counts below change only when such a value is made or
    /// ends, so they cannot go below zero.
    struct ReadPacing {
        /// The configured interval (ns); 0 reads at once.
        var configured: UInt64 = 0
        /// Live paced-stream holds and live prompt-read holds.
        var paced = 0
        var prompt = 0

        /// The interval in force: paced only when some stream allows it and nothing holds.
        var interval: UInt64 { paced > 0 && prompt == 0 ? configured : 0 }

        mutating func count(_ role: ReadPacingHold.Role, by delta: Int) {
            switch role {
            case .prompt: prompt += delta
            case .paced: paced += delta
            }
        }
    }

    /// A say in the thread's read pacing, from ``ThreadExecutor/holdPromptReads()`` (prompt reads:
    /// each descriptor read as soon as it is readable) or ``ThreadExecutor/allowPacedReads()``
    /// (paced reads allowed while no prompt-read hold lasts), until it ends, once: by
    /// ``release()``, or when the value is dropped (the end of the binding's scope, an optional
    /// set to `nil`, its owner's deinit). It cannot be copied, so it cannot be released twice or
    /// by anyone else.
    public struct ReadPacingHold: ~Copyable, Sendable {
        enum Role { case prompt, paced }
        private let executor: ThreadExecutor
        private let role: Role

        fileprivate init(_ executor: ThreadExecutor, _ role: Role) {
            self.executor = executor
            self.role = role
            executor.updatePacing { $0.count(role, by: 1) }
        }

        /// Ends the hold now rather than where the value would be dropped.
        public consuming func release() {}

        deinit { executor.updatePacing { [role] in $0.count(role, by: -1) } }
    }

    /// A ``ReadPacingHold`` from ``ThreadExecutor/holdPromptReads()``.
    public typealias PromptReadHold = ReadPacingHold
    /// A ``ReadPacingHold`` from ``ThreadExecutor/allowPacedReads()``.
    public typealias PacedStreamHold = ReadPacingHold

    /// Sets the paced read interval (0: always read at once, the default).
    public func setReadInterval(seconds: Double) {
        let interval = UInt64(max(0, min(seconds, 10)) * 1e9)
        updatePacing { $0.configured = interval }
    }

    /// Reads promptly until the returned hold ends. Holds nest: reads are paced again only when
    /// the last one ends.
    public func holdPromptReads() -> PromptReadHold { ReadPacingHold(self, .prompt) }

    /// Allows paced reads (at most once per ``setReadInterval(seconds:)``) until the returned
    /// hold ends, while no prompt-read hold lasts.
    public func allowPacedReads() -> PacedStreamHold { ReadPacingHold(self, .paced) }

    /// The interval in force now, in seconds (for status and tests).
    public var readInterval: Double { Double(withPacing { $0.interval }) / 1e9 }

    fileprivate func updatePacing(_ change: (inout ReadPacing) -> Void) {
        let slower = withPacing { pacing -> Bool in
            let before = pacing.interval
            change(&pacing)
            return pacing.interval < before
        }
        // A thread asleep on the old interval re-reads it.
        if slower, !isCurrent { execute {} }
    }
}

extension ThreadExecutor {
    func withPacing<T>(_ body: (inout ReadPacing) -> T) -> T { state.withLock { body(&$0.pacing) } }
}
