/// Host-to-controller ACL flow control as a pure state machine, Core v5.4, Vol 4, Part E, 4.1.1.
///
/// Design overview: the controller has `totalBuffers` ACL buffers (LE Read Buffer Size). Each ACL
/// packet sent uses one until Number Of Completed Packets returns it. The host counts them in
/// total and per connection (Zephyr's `in_ll`, bumble's `DataPacketQueue`). When a connection
/// goes down the controller flushes its packets *without* reporting them, so
/// ``disconnected(handle:)`` returns that connection's credits; without it the host would lose
/// buffers at every disconnect and eventually stall.
///
/// bumble's emulator never enforces the advertised credits (`docs/bumble-test-peer.md`, 8): only these
/// tests and a stricter peer exercise this logic.
public struct ACLCredits: Sendable {
    /// The controller's buffer count.
    public let totalBuffers: Int
    /// Buffers free now.
    public private(set) var available: Int
    private var inFlight: [UInt16: Int] = [:]

    /// A controller report that does not match what the host sent (the controller's fault); logged
    /// by the owner and otherwise ignored.
    public enum Anomaly: Equatable, Sendable, CustomStringConvertible {
        /// Completed packets for a handle with nothing in flight (unknown or already disconnected).
        case unknownHandle(UInt16, completed: Int)
        /// More completed than in flight; only the in-flight count was released.
        case moreCompletedThanSent(handle: UInt16, completed: Int, inFlight: Int)

        public var description: String {
            switch self {
            case let .unknownHandle(handle, completed):
                return "controller completed \(completed) ACL packet(s) for handle 0x\(String(handle, radix: 16)) with none in flight"
            case let .moreCompletedThanSent(handle, completed, inFlight):
                return "controller completed \(completed) ACL packet(s) for handle 0x\(String(handle, radix: 16)) but only \(inFlight) were in flight"
            }
        }
    }

    /// It is a programmer error to pass a negative buffer count.
    public init(totalBuffers: Int) {
        precondition(totalBuffers >= 0, "buffer count cannot be negative")
        self.totalBuffers = totalBuffers
        available = totalBuffers
    }

    /// Packets sent on `handle` and not yet completed.
    public func inFlight(handle: UInt16) -> Int { inFlight[handle] ?? 0 }

    /// Packets in flight on all connections.
    public var totalInFlight: Int { totalBuffers - available }

    /// Takes one credit for a packet about to be sent on `handle`; `false` (and no change) when
    /// none is free, in which case the packet must wait.
    public mutating func consume(handle: UInt16) -> Bool {
        guard available > 0 else { return false }
        available -= 1
        inFlight[handle, default: 0] += 1
        return true
    }

    /// Returns credits reported by Number Of Completed Packets.
    public mutating func complete(_ event: NumberOfCompletedPacketsEvent) -> [Anomaly] {
        var anomalies: [Anomaly] = []
        for entry in event.entries {
            let completed = Int(entry.numCompletedPackets)
            let current = inFlight[entry.connectionHandle] ?? 0
            if current == 0 {
                if completed > 0 { anomalies.append(.unknownHandle(entry.connectionHandle, completed: completed)) }
                continue
            }
            let released = min(completed, current)
            if completed > current {
                anomalies.append(.moreCompletedThanSent(handle: entry.connectionHandle, completed: completed, inFlight: current))
            }
            inFlight[entry.connectionHandle] = current - released == 0 ? nil : current - released
            available += released
        }
        return anomalies
    }

    /// Returns every credit held by `handle` (on Disconnection Complete); the number released.
    @discardableResult
    public mutating func disconnected(handle: UInt16) -> Int {
        let released = inFlight.removeValue(forKey: handle) ?? 0
        available += released
        return released
    }
}
