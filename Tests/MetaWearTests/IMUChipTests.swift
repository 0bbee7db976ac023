import XCTest

@testable import MetaWear

final class IMUChipTests: XCTestCase {
    func testFromImplementationBytes() {
        XCTAssertEqual(IMUChip(gyroImplementation: 0), .bmi160)
        XCTAssertEqual(IMUChip(gyroImplementation: 1), .bmi270)
        XCTAssertNil(IMUChip(gyroImplementation: 2))
        XCTAssertEqual(IMUChip(accelerometerImplementation: 1), .bmi160)
        XCTAssertEqual(IMUChip(accelerometerImplementation: 4), .bmi270)
        XCTAssertNil(IMUChip(accelerometerImplementation: 0))
        XCTAssertNil(IMUChip(accelerometerImplementation: 3))
    }

    func testChipComesFromImplementationNotModel() {
        // A board claiming model "5" (MetaMotion R) but reporting BMI270 implementations.
        var info = Fixtures.board(["03 80 04 00", "13 80 01 00", "14 80 00 00"], modelNumber: "5")
        XCTAssertEqual(info.model, .metaMotionR)
        XCTAssertEqual(info.gyroChip, .bmi270)
        XCTAssertEqual(info.accelerometerChip, .bmi270)
        info.record(.gyro, nil)
        XCTAssertNil(info.gyroChip)
        XCTAssertNil(info.gyroRegisters)
    }
}
