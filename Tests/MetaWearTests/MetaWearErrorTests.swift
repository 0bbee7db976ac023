import XCTest

@testable import MetaWear

final class MetaWearErrorTests: XCTestCase {
    func testErrorDescriptionsNameTheHeader() {
        let error = MetaWearPacketError.unexpectedLength(module: 0x13, register: 0x05, expected: 8, actual: 5)
        XCTAssertEqual(error.description, "MetaWear notification gyro [13 05]: expected 8 bytes, got 5")
    }
}
