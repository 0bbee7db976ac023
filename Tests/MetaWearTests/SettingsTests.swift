import XCTest

@testable import MetaWear

final class SettingsTests: XCTestCase {
    func testBatteryReadAndResponse() throws {
        XCTAssertBytes(Settings.readBatteryState(), "11 8c")
        let packet = try MetaWearPacketParser().parse(hex("11 8c 63 34 10"))
        XCTAssertEqual(packet, .battery(.init(chargePercent: 99, voltageMillivolts: 4148)))
        // The silent form answers under 11 cc and decodes the same.
        XCTAssertEqual(try MetaWearPacketParser().parse(hex("11 cc 63 34 10")), packet)
        XCTAssertThrowsError(try MetaWearPacketParser().parse(hex("11 8c 63 34")))
    }

    func testConnectionParameters() {
        XCTAssertBytes(
            Settings.connectionParameters(
                minimumIntervalMilliseconds: 750, maximumIntervalMilliseconds: 1000, latency: 128,
                supervisionTimeoutMilliseconds: 16384),
            "11 09 58 02 20 03 80 00 66 06")
        XCTAssertBytes(
            Settings.connectionParameters(
                minimumIntervalMilliseconds: 7.5, maximumIntervalMilliseconds: 7.5, latency: 0,
                supervisionTimeoutMilliseconds: 6000),
            "11 09 06 00 06 00 00 00 58 02")
        XCTAssertEqual(Settings.streamingConnectionParameters.bytes, hex("11 09 06 00 06 00 00 00 58 02"))
    }

    func testConnectionParametersTruncateAndClamp() {
        // 11.25 ms → 9 units; 11.2 ms → 8.96 → 8 (truncation, not rounding).
        XCTAssertEqual(Settings.units(11.25, step: 1.25), 9)
        XCTAssertEqual(Settings.units(11.2, step: 1.25), 8)
        XCTAssertEqual(Settings.units(-5, step: 1.25), 0)
        XCTAssertEqual(Settings.units(.nan, step: 10), 0)
        XCTAssertEqual(Settings.units(1e9, step: 10), 65535)
    }

    func testMACAddress() throws {
        XCTAssertBytes(Settings.readMACAddress(), "11 8b")
        guard case .macAddress(let mac) = try MetaWearPacketParser().parse(hex("11 8b 01 07 7b 52 8f c9 e8")) else {
            return XCTFail("not a MAC")
        }
        XCTAssertEqual(mac.description, "E8:C9:8F:52:7B:07")
    }
}
