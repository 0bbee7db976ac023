import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A full integrity check that passed, as the store remembers it (rows of its `counter` table,
/// written by the check itself).
public struct IntegrityVerification: Sendable, Equatable {
    /// When the check ended (ms since the epoch, the host clock).
    public var atMs: Double
    /// How long it took.
    public var seconds: Double
    /// The kernel's boot it ran in (``IntegritySchedule/currentBoot()``); `nil` where unknown.
    public var boot: Int64?

    public init(atMs: Double, seconds: Double, boot: Int64?) {
        self.atMs = atMs
        self.seconds = seconds
        self.boot = boot
    }

    static let atMsCounter = "integrityCheck.verifiedAtMs"
    static let millisecondsCounter = "integrityCheck.milliseconds"
    static let bootCounter = "integrityCheck.boot"
}

/// When the full integrity check (``GyroStore/verifyIntegrity()``) runs: at the first start of
/// every boot, and then once per `interval` of the gateway's life, not at every start.
///
/// Why a restart in the same boot may skip it: the check reads the whole file (25-50 s and
/// 2 GB of reads on a Pi's SD card), and a watchdog or crash restart loop would do that at
/// every start. What a process's death can leave wrong, the open already checks (what the last
/// checkpoint wrote, the trees' edges, what recovery reads): a killed process loses no write
/// the kernel accepted. The damage only a full read finds is the disk's: lost or torn writes at
/// a power cut, which is a new boot, so a new boot always checks; and decay of pages written
/// long ago, which the check every `interval` finds, as it would in a gateway that never
/// restarts (docs/durability.md, "Corruption").
public enum IntegritySchedule {
    /// 24 hours: on a 2 GB store on an SD card, under a minute of idle-priority reads a day.
    public static let defaultIntervalMs: Double = 24 * 3600 * 1000

    /// Milliseconds until the next check is due: 0 when none is remembered, it ran in another
    /// (or an unknown) boot, or `intervalMs` has passed since; a clock that went back more than
    /// the interval also checks.
    public static func delayMs(after last: IntegrityVerification?, boot: Int64?, nowMs: Double,
                               intervalMs: Double = defaultIntervalMs) -> Double {
        guard let last, let boot, last.boot == boot else { return 0 }
        let age = nowMs - last.atMs
        guard age >= -intervalMs, age < intervalMs else { return 0 }
        return min(intervalMs, intervalMs - age)
    }

    /// The kernel's boot: the first 64 bits of `/proc/sys/kernel/random/boot_id` (a random
    /// UUID made at each boot); `nil` where there is none.
    public static func currentBoot() -> Int64? {
        let fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return boot(fromText: String(decoding: buffer.prefix(count), as: UTF8.self))
    }

    /// The first 16 hex digits of a boot id's text, as the bits of an Int64.
    static func boot(fromText text: String) -> Int64? {
        let digits = text.filter(\.isHexDigit).prefix(16)
        guard digits.count == 16, let value = UInt64(digits, radix: 16) else { return nil }
        return Int64(bitPattern: value)
    }
}
