extension ThreadExecutor {
    /// How often the thread reads its descriptors.
    ///
    /// Why: each read of a notification that came alone costs a thread wake-up, which on a small
    /// board costs far more than handling the notification. Samples stamped by the board's clock
    /// (a MetaWear time accounter) lose nothing by waiting in the socket for a while, so when every
    /// stream on the thread is such a stream the thread reads at most once per `interval`, and each
    /// wake-up handles a batch. Anything that needs its answer or its arrival time at once (a
    /// request in flight, a connection being set up, samples stamped on arrival) holds the thread
    /// to prompt reads while it lasts.
    struct ReadPacing {
        /// The configured interval (ns); 0 reads at once.
        var configured: UInt64 = 0
        /// Streams that allow paced reads, and holders of prompt reads.
        var paced = 0
        var prompt = 0

        /// The interval in force: paced only when some stream allows it and nothing holds.
        var interval: UInt64 { paced > 0 && prompt == 0 ? configured : 0 }
    }

    /// Sets the paced read interval (0: always read at once, the default).
    public func setReadInterval(seconds: Double) {
        let interval = UInt64(max(0, min(seconds, 10)) * 1e9)
        updatePacing { $0.configured = interval }
    }

    /// A stream whose samples carry the board's time starts (+1) or ends (-1).
    public func pacedStream(_ delta: Int) { updatePacing { $0.paced += delta } }

    /// Something that needs prompt reads starts (+1) or ends (-1).
    public func promptReads(_ delta: Int) { updatePacing { $0.prompt += delta } }

    /// The interval in force now, in seconds (for status and tests).
    public var readInterval: Double { Double(withPacing { $0.interval }) / 1e9 }

    private func updatePacing(_ change: (inout ReadPacing) -> Void) {
        let slower = withPacing { pacing -> Bool in
            let before = pacing.interval
            change(&pacing)
            // Released more than held would be a bug; reading at once is the safe side of it.
            assert(pacing.paced >= 0 && pacing.prompt >= 0, "read pacing released more than held")
            (pacing.paced, pacing.prompt) = (max(0, pacing.paced), max(0, pacing.prompt))
            return pacing.interval < before
        }
        // A thread asleep on the old interval re-reads it.
        if slower, !isCurrent { execute {} }
    }
}

extension ThreadExecutor {
    func withPacing<T>(_ body: (inout ReadPacing) -> T) -> T { state.withLock { body(&$0.pacing) } }
}
