extension Duration {
    /// In seconds, as the loop's timers take them.
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) * 1e-18
    }
}
