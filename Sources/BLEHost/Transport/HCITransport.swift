import HCI
import PosixThreads

/// A byte pipe to one HCI controller: H4 packets out, H4 packets in, on a `ThreadExecutor`.
///
/// One transport per controller and one ``BLEHost`` per transport. The host runs on the
/// transport's ``loop``: packets from the controller are handed to it synchronously on that
/// thread, and it writes from there too.
public protocol HCITransport: Sendable {
    /// The thread that delivers this transport's packets.
    var loop: ThreadExecutor { get }
    /// Starts delivery: `receive` runs on ``loop`` once per wake-up that brought packets from
    /// the controller, and takes them in order from its argument until that returns `nil` (the
    /// transport reads on as they are taken); `ended` runs there once when the transport fails or
    /// closes. Both are released then (the host they hold holds the transport). Call once.
    ///
    /// Why a wake-up's packets in one call: the host enters its actor once per call
    /// (`Actor.assumeIsolated`, which costs several times a packet's own handling), and a paced
    /// loop reads hundreds of packets per wake-up. Why pulled rather than handed over in an
    /// array: no copy of each packet into a batch and out again.
    func start(receive: @escaping @Sendable (_ next: @Sendable () -> H4Packet?) -> Void, ended: @escaping @Sendable (TransportError) -> Void)
    /// Writes one packet (commands and ACL data) to the controller. Call on ``loop``.
    func send(_ packet: H4Packet) throws(TransportError)
    /// Closes the transport: `ended` is called (if it was not already). Idempotent.
    func close()
}
