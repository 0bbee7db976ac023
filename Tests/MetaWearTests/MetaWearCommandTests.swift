import XCTest

@testable import MetaWear

final class MetaWearCommandTests: XCTestCase {
    func testCommandBasics() {
        let command = Gyro.configure(.sdkDefault)
        XCTAssertEqual(command.module, .gyro)
        XCTAssertEqual(command.register, 0x03)
        XCTAssertEqual(Array(command.payload), [0x28, 0x00])
        XCTAssertEqual(command.description, "13 03 28 00")
        XCTAssertFalse(command.requiresWriteWithResponse)
        XCTAssertTrue(MetaWearCommand(module: .macro, register: 0x02).requiresWriteWithResponse)
    }
}
