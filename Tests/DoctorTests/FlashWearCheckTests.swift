@testable import Doctor
import Foundation
import TestSupport
import XCTest

/// `flash wear`: an SD card under the data directory and a load above the daily budget warn.
final class FlashWearCheckTests: XCTestCase {
    /// The device is found through /sys/dev/block/MAJ:MIN, here a fake sysfs whose link points
    /// into an mmcblk device's partition.
    func testTheDataDirectorysDeviceIsFoundThroughSysfs() throws {
        let folder = try TemporaryDirectory("flash-wear")
        defer { folder.remove() }
        let partition = folder.file("devices/platform/mmc0/mmc_host/mmc0/mmc0:aaaa/block/mmcblk0/mmcblk0p2")
        try FileManager.default.createDirectory(atPath: partition, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.file("sysfs"), withIntermediateDirectories: true)
        var info = stat()
        XCTAssertEqual(stat(folder.path, &info), 0)
        try FileManager.default.createSymbolicLink(atPath: folder.file("sysfs/\(FlashWearCheck.deviceNumbers(info.st_dev))"),
                                                   withDestinationPath: partition)
        let device = try XCTUnwrap(FlashWearCheck.blockDevice(of: folder.path, sysfs: folder.file("sysfs")))
        XCTAssertTrue(device.hasSuffix("/mmcblk0/mmcblk0p2"), device)
        XCTAssertTrue(FlashWearCheck.isSDCard(device))
        XCTAssertNil(FlashWearCheck.blockDevice(of: folder.path, sysfs: folder.file("no-sysfs")))
    }

    func testAnSDCardAboveTheBudgetWarns() {
        let result = FlashWearCheck.verdict(device: "/sys/devices/platform/mmc0/block/mmcblk0/mmcblk0p2", measured: "/var/lib/gyrogate",
                                            dataDirectory: "/var/lib/gyrogate", bytesPerDay: 10_000_000_000)
        XCTAssertEqual(result.status, .warn)
        XCTAssertEqual(result.problem, .sdCardWear(path: "/var/lib/gyrogate", device: "mmcblk0p2", bytesPerDay: 10_000_000_000,
                                                   budgetBytes: FlashWearCheck.dailyBudgetBytes))
        XCTAssertTrue(result.line.contains("SD card mmcblk0p2"), result.line)
        XCTAssertTrue(result.line.contains(" — fix: "), result.line)
    }

    func testWithinTheBudgetOrOffTheCardPasses() {
        let card = "/sys/devices/platform/mmc0/block/mmcblk0/mmcblk0p2"
        XCTAssertEqual(FlashWearCheck.verdict(device: card, measured: "/d", dataDirectory: "/d", bytesPerDay: 500_000_000).status, .ok)
        XCTAssertEqual(FlashWearCheck.verdict(device: "/sys/devices/pci0000:00/0000:00:04.0/virtio1/block/vda", measured: "/d",
                                              dataDirectory: "/d", bytesPerDay: 50_000_000_000).status, .ok)
        XCTAssertEqual(FlashWearCheck.verdict(device: nil, measured: "/d", dataDirectory: "/d", bytesPerDay: 50_000_000_000).status, .ok)
        XCTAssertFalse(FlashWearCheck.isSDCard("/sys/devices/virtual/block/loop0"))
    }
}
