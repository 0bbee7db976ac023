/// What the operator sees of the Bluetooth controller: running, or why not and when the next
/// attempt is due; once it has gone away mid-run, how often and why the last time.
actor ControllerMonitor {
    private var current = "starting"
    private var losses = 0
    private var lastLoss: String?

    var state: String {
        guard losses > 0, current == "running", let lastLoss else { return current }
        return "running; re-opened after \(losses) \(losses == 1 ? "loss" : "losses"), last: \(lastLoss)"
    }

    func started() { current = "running" }
    func stopped() { current = "stopped" }

    func failed(_ reason: String, retryIn delay: Duration) {
        current = "unavailable: \(reason); retrying in \(delay.components.seconds) s"
    }

    /// The controller went away after it had started; the sensors are being stopped before the
    /// transport is opened again.
    func lost(_ reason: String) {
        losses += 1
        lastLoss = reason
        current = "unavailable: \(reason); stopping the sensors"
    }
}

extension Duration {
    /// ±20 % so that gateways restarted together do not retry in step.
    func jittered() -> Duration { self * Double.random(in: 0.8...1.2) }
}
