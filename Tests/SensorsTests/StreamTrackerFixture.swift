import MetaWear

extension StreamTracker {
    /// A 100 Hz tracker whose samples 0…99 arrived on time from t = 50 s, 2 ms after they were
    /// due, and were flushed: the start of the reset and restart cases.
    static func afterHundredSamples(confirmationWindow: Double = 0.5, warmUpWindow: Double? = nil) -> StreamTracker {
        var tracker = StreamTracker(odrHz: 100, decoder: SampleDecoder(lsbPerUnit: 1),
                                    confirmationWindow: confirmationWindow, warmUpWindow: warmUpWindow)
        for n in 0..<100 {
            _ = tracker.push(RawTriples(RawTriple(x: Int16(n), y: 0, z: 0)), arrival: 50 + Double(n) / 100 + 0.002)
        }
        _ = tracker.flush()
        return tracker
    }
}
