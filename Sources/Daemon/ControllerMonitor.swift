import Foundation

/// What the operator sees of the Bluetooth controller: running, or why not and when the next
/// attempt is due.
actor ControllerMonitor {
    private(set) var state = "starting"

    func started() { state = "running" }
    func stopped() { state = "stopped" }

    func failed(_ reason: String, retryIn delay: Duration) {
        state = "unavailable: \(reason); retrying in \(delay.components.seconds) s"
    }
}

extension Duration {
    /// ±20 % so that gateways restarted together do not retry in step.
    func jittered() -> Duration { self * Double.random(in: 0.8...1.2) }
}
