import XCTest

@testable import MetaWear

final class DebugTests: XCTestCase {
    func testCommands() {
        XCTAssertBytes(Debug.reset(), "fe 01")
        XCTAssertBytes(Debug.disconnect(), "fe 06")
        XCTAssertBytes(Debug.jumpToBootloader(), "fe 02")
        XCTAssertBytes(Debug.resetAfterGarbageCollection(), "fe 05")
        XCTAssertBytes(Debug.powerSave(), "fe 07")
    }
}
