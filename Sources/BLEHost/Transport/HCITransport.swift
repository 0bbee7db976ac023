import HCI

/// A byte pipe to one HCI controller: H4 packets out, H4 packets in.
///
/// One transport per controller and one ``BLEHost`` per transport. Implementations own their
/// descriptor and reader; ``packets()`` may be called once, and its stream finishes (with an
/// error when the link failed) when the transport closes.
public protocol HCITransport: Sendable {
    /// Writes one packet (commands and ACL data) to the controller.
    func send(_ packet: H4Packet) async throws
    /// Packets from the controller (events and ACL data), in order. Call once.
    func packets() -> AsyncThrowingStream<H4Packet, any Error>
    /// Closes the descriptor; the packet stream finishes. Idempotent.
    func close() async
}
