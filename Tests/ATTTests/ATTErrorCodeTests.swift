import ATT
import XCTest

final class ATTErrorCodeTests: XCTestCase {
    func testSpecNamesAndOpenSet() {
        XCTAssertEqual(ATTErrorCode.attributeNotFound.rawValue, 0x0A)
        XCTAssertEqual(ATTErrorCode(rawValue: 0x0A).description, "attributeNotFound (0xa)")
        XCTAssertEqual(ATTErrorCode(rawValue: 0x85).description, "applicationError (0x85)")
        XCTAssertTrue(ATTErrorCode(rawValue: 0x80).isApplicationError)
        XCTAssertEqual(ATTErrorCode(rawValue: 0x30).description, "error (0x30)")
        XCTAssertEqual(ATTOpcode(rawValue: 0x1B), .handleValueNotification)
        XCTAssertFalse(ATTOpcode.handleValueNotification.isCommand)
        XCTAssertTrue(ATTOpcode.writeCommand.isCommand)
    }
}
