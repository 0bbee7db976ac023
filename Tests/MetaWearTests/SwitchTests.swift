import XCTest

@testable import MetaWear

final class SwitchTests: XCTestCase {
    func testSubscribe() {
        XCTAssertBytes(Switch.subscribe(), "01 01 01")
        XCTAssertBytes(Switch.unsubscribe(), "01 01 00")
    }

    func testPressAndRelease() throws {
        let parser = MetaWearPacketParser()
        XCTAssertEqual(try parser.parse(hex("01 01 01")), .switchState(.pressed))
        XCTAssertEqual(try parser.parse(hex("01 01 00")), .switchState(.released))
        XCTAssertTrue(Switch.State.pressed.isPressed)
        XCTAssertThrowsError(try parser.parse(hex("01 01")))
        XCTAssertThrowsError(try parser.parse(hex("01 01 01 00")))
    }
}
