import CHCISocket
import Glibc
import PosixThreads

/// The kernel's announcements about its Bluetooth adapters, so that a gateway waiting to re-open
/// `hci:N` tries again when the adapter is back instead of at the end of a blind back-off.
public enum AdapterEvents {
    /// Returns after `timeout`, or earlier when the kernel reports adapter N of `spec` (`hci:N`)
    /// up or down: it registered again and finished its set-up (the kernel powers a new adapter
    /// up for a moment), or whoever held it up let it go. For other transports, or where the
    /// kernel's events cannot be had, it waits the whole `timeout`.
    ///
    /// The events socket is watched by `loop` and the timeout is one of its timers: nothing
    /// polls, and the wait costs no thread.
    ///
    /// - throws: `CancellationError` when the task is cancelled.
    public static func waitForAdapter(_ spec: String, upTo timeout: Duration, loop: ThreadExecutor = .dataPlane) async throws {
        let fd: Int32 = spec.hasPrefix("hci:") ? chci_open_adapter_events() : -1
        guard fd >= 0, let index = UInt16(spec.dropFirst(4)) else {
            if fd >= 0 { close(fd) }
            try await Task.sleep(for: timeout)
            return
        }
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        let alarm = loop.makeAlarm()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let registration = loop.register(fd) {
                    var adapter: UInt16 = 0
                    var back = false
                    while true {
                        let event = chci_read_adapter_event(fd, &adapter)
                        if event <= 0 { break }
                        if adapter == index, event == upEvent || event == downEvent { back = true }
                    }
                    if back { loop.ring(alarm) }
                }
                // Runs once: at the timeout, or when rung (the adapter is back, or the task is cancelled).
                loop.schedule(after: seconds, tolerance: 0.1, alarm: alarm) {
                    loop.unregister(registration)
                    loop.execute { close(fd) }  // after the loop has stopped watching it
                    continuation.resume()
                }
            }
        } onCancel: {
            loop.ring(alarm)
        }
        try Task.checkCancellation()
    }

    /// The kernel's HCI_DEV_UP and HCI_DEV_DOWN (include/net/bluetooth/hci.h).
    static let upEvent: Int32 = 3
    static let downEvent: Int32 = 4
}
