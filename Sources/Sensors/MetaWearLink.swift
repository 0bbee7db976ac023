import PosixThreads
import BLEHost
import MetaWear

/// What the board layer needs from a GATT connection to a MetaWear. The BLE host adapts its
/// `LEConnection`/`GATTClient` to this; tests use an in-process emulated board.
public protocol MetaWearLink: Sendable {
    /// The thread that delivers this link's notifications; the board runs on it.
    var loop: ThreadExecutor { get }
    /// Enables notifications on `326a9006` (writes its CCCD): they are handed to `receive` on
    /// ``loop``, in arrival order, in batches valid for the call only (the BLE host's batch is a
    /// transport wake-up's values); `ended` is called there once when the link goes down, after
    /// every value.
    func enableNotifications(receive: @escaping @Sendable (NotificationBatch) -> Void,
                             ended: @escaping @Sendable () -> Void) async throws
    /// Reads a Device Information string (`2a26`, `2a24`, …); `nil` when the board has no such
    /// characteristic.
    func readString(_ characteristicUUID: String) async throws -> String?
    /// Writes one command to `326a9001`.
    func write(_ command: MetaWearCommand) async throws
    /// Asks the host's controller for a connection interval (LE Connection Update). Best effort.
    func requestConnectionInterval(minimumMilliseconds: Double, maximumMilliseconds: Double) async
    /// Ends the link (no effect when already gone).
    func disconnect() async
    /// Returns when the link is gone, with a reason for the logs and the gap record.
    func waitForDisconnection() async -> String
}

/// Opens links to boards. Implementations serialise scans and connects per controller (see
/// ``BLEMetaWearConnector``, whose host runs one at a time).
public protocol MetaWearConnector: Sendable {
    /// Connects to the board at `address` (`C4:BE:84:00:00:01`) within `timeout`.
    func connect(address: String, timeout: Duration) async throws -> any MetaWearLink
    /// Scans for advertising MetaWear boards for up to `timeout`; returns their addresses.
    func scan(timeout: Duration) async throws -> [String]
}

/// Host time in seconds since the Unix epoch, read from a monotonic clock anchored once to the
/// wall clock, so that a wall-clock step (NTP) cannot reorder samples.
public struct HostClock: Sendable {
    private let wallAtStart: Double
    /// Whole seconds of CLOCK_MONOTONIC at the anchor (its fraction is folded into `wallAtStart`).
    private let monotonicAtStart: Double

    public init() {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        wallAtStart = HostClock.wallSeconds() - Double(spec.tv_nsec) * 1e-9
        monotonicAtStart = Double(spec.tv_sec)
    }

    public func now() -> Double {
        // CLOCK_MONOTONIC read directly, without Duration's 128-bit arithmetic
        // (this runs for every notification).
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return wallAtStart + (Double(spec.tv_sec) - monotonicAtStart) + Double(spec.tv_nsec) * 1e-9
    }

    static func wallSeconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
