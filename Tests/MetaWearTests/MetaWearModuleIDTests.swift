import XCTest

@testable import MetaWear

final class MetaWearModuleIDTests: XCTestCase {
    func testKnownAndUnknownIDs() {
        XCTAssertEqual(MetaWearModuleID.gyro.rawValue, 0x13)
        XCTAssertEqual(MetaWearModuleID.accelerometer.rawValue, 0x03)
        XCTAssertEqual(MetaWearModuleID.settings.rawValue, 0x11)
        XCTAssertEqual(MetaWearModuleID.logging.rawValue, 0x0b)
        XCTAssertEqual(MetaWearModuleID.debug.rawValue, 0xfe)
        XCTAssertEqual(MetaWearModuleID.gyro.description, "gyro")
        XCTAssertEqual(MetaWearModuleID(0x42).description, "unknown(0x42)")
        XCTAssertEqual((0...255).compactMap { MetaWearModuleID(UInt8($0)).name }.count, 25)
    }

}
