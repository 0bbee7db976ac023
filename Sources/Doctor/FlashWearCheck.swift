import GatewayConfig
import Glibc
import TextTools

/// `flash wear`: warns when the data directory is on an SD card (an `mmcblk` device) and the
/// configured load would write more than ``dailyBudgetBytes`` a day to it.
///
/// SD cards wear out by the bytes written, and small synchronous writes cost them more than their
/// size; the store syncs every commit. The expected volume is the configured sample rate times the
/// device bytes a sample costs, as `e2e_bench.py --ext4` measures them (docs/benchmarks.md).
enum FlashWearCheck {
    /// A consumer card of 32 GB rated for a few hundred erase cycles lasts years at this rate, even
    /// with the card's own write amplification of small writes.
    static let dailyBudgetBytes: Int64 = 1_000_000_000
    /// Device bytes (journal included) per stored sample at a 1 s commit interval, 4 x 100 Hz.
    static let deviceBytesPerSample: Double = 60

    static func run(_ configuration: GatewayConfiguration, measured: String, sysfs: String = "/sys/dev/block") -> CheckResult {
        verdict(device: blockDevice(of: measured, sysfs: sysfs), measured: measured, dataDirectory: configuration.dataDirectory,
                bytesPerDay: expectedBytesPerDay(configuration))
    }

    static func verdict(device: String?, measured: String, dataDirectory: String, bytesPerDay: Int64) -> CheckResult {
        guard let device, isSDCard(device) else {
            return .ok("flash wear", "\(measured) is not on an SD card (\(device.map { lastComponent($0) } ?? "device unknown")); "
                + "about \(formatBytes(bytesPerDay)) a day expected")
        }
        let name = lastComponent(device)
        if bytesPerDay > dailyBudgetBytes {
            return .problem("flash wear", .sdCardWear(path: dataDirectory, device: name, bytesPerDay: bytesPerDay, budgetBytes: dailyBudgetBytes))
        }
        return .ok("flash wear", "\(measured) is on SD card \(name); about \(formatBytes(bytesPerDay)) a day expected, "
            + "within the budget of \(formatBytes(dailyBudgetBytes))")
    }

    /// Samples a day from the configured sensors and streams, at the measured device bytes per sample.
    static func expectedBytesPerDay(_ configuration: GatewayConfiguration) -> Int64 {
        let perSensor = configuration.gyro.odrHz + (configuration.accelerometer.enabled ? configuration.accelerometer.odrHz : 0)
        let samplesPerSecond = Double(configuration.sensors.count) * perSensor
        return Int64(samplesPerSecond * deviceBytesPerSample * 86_400)
    }

    /// An MMC/SD block device or one of its partitions (`…/mmcblk0/mmcblk0p2`).
    static func isSDCard(_ devicePath: String) -> Bool {
        devicePath.split(separator: "/").contains { $0.hasPrefix("mmcblk") }
    }

    /// The sysfs path of the block device holding `path`, or `nil` (a virtual filesystem, no sysfs).
    static func blockDevice(of path: String, sysfs: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let link = "\(sysfs)/\(deviceNumbers(info.st_dev))"
        guard let resolved = realpath(link, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// "MAJOR:MINOR" of a `dev_t` as glibc encodes it (its `major`/`minor` are macros Swift does not import).
    static func deviceNumbers(_ device: dev_t) -> String {
        let value = UInt64(device)
        let major = ((value >> 8) & 0xFFF) | ((value >> 32) & ~UInt64(0xFFF))
        let minor = (value & 0xFF) | ((value >> 12) & ~UInt64(0xFF))
        return "\(major):\(minor)"
    }

    private static func lastComponent(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
