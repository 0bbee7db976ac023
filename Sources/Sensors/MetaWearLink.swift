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
    /// Scans like ``scan(timeout:)`` and returns each board heard with its RSSI (dBm).
    func sightings(timeout: Duration) async throws -> [String: Int]
}

extension MetaWearConnector {
    /// For connectors without signal strength (an in-process board): every board heard alike.
    public func sightings(timeout: Duration) async throws -> [String: Int] {
        Dictionary(try await scan(timeout: timeout).map { ($0, -60) }, uniquingKeysWith: { first, _ in first })
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
