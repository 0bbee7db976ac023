#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the gateway has written to storage since the store opened, for `store.writtenBytes` and
/// `store.writtenBytesPerDay` in the status and `gyrogate_store_written_bytes_total` in the metrics.
///
/// The figure is the process's `write_bytes` of `/proc/self/io`: the bytes of file pages it
/// dirtied, counted by the kernel as they are handed to the filesystem. The store is the only
/// file the gateway writes while it runs (its logs go to a pipe, which is not counted), so this
/// is the store's WAL, database file and WAL index; the filesystem's journal and the flash's own
/// amplification come on top (docs/durability.md, "Writes"). The baseline is taken once the store
/// is open, so opening (the WAL written to its working size once) does not inflate the daily rate.
public struct StoreWrites: Sendable {
    let baselineBytes: Int64
    let openedAt: ContinuousClock.Instant

    /// `nil` where the kernel does not count (no `/proc/self/io`).
    init?() {
        guard let bytes = Self.processWriteBytes() else { return nil }
        baselineBytes = bytes
        openedAt = .now
    }

    /// Bytes written since the store opened.
    public func written() -> Int64? {
        Self.processWriteBytes().map { max(0, $0 - baselineBytes) }
    }

    /// `written()` scaled to a day at the rate since the store opened; `nil` in its first minute,
    /// when start-up writes would dominate the rate.
    public func perDay() -> Double? {
        let elapsed = ContinuousClock.now - openedAt
        guard elapsed >= .seconds(60), let written = written() else { return nil }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Double(written) / seconds * 86_400
    }

    /// `write_bytes` of `/proc/self/io`.
    static func processWriteBytes() -> Int64? {
        let fd = open("/proc/self/io", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return parseWriteBytes(buffer[..<count])
    }

    /// The value of the `write_bytes:` line of a `/proc/PID/io` text.
    static func parseWriteBytes(_ text: some Collection<UInt8>) -> Int64? {
        for line in text.split(separator: UInt8(ascii: "\n")) {
            let key = Array("write_bytes:".utf8)
            guard line.starts(with: key) else { continue }
            let digits = line.dropFirst(key.count).drop { $0 == UInt8(ascii: " ") }
            guard !digits.isEmpty, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }), digits.count <= 18 else { return nil }
            return digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - 48) }
        }
        return nil
    }
}
