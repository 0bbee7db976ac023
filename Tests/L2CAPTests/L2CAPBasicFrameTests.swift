import BluetoothWire
import L2CAP
import WireTestSupport
import XCTest

final class L2CAPBasicFrameTests: XCTestCase {
    func testDecodesAndReencodesAnATTFrame() throws {
        let bytes = hex("07 00 04 00 1b 12 00 01 02 03 04")
        let frame = try L2CAPBasicFrame(decoding: bytes)
        XCTAssertEqual(frame.channelID, .att)
        XCTAssertEqual(Array(frame.payload), hex("1b 12 00 01 02 03 04"))
        XCTAssertEqual(frame.encode(), bytes)
        assertEveryTruncationThrows(bytes) { _ = try L2CAPBasicFrame(decoding: $0) }
    }

    func testLengthMustMatch() {
        XCTAssertThrowsError(try L2CAPBasicFrame(decoding: hex("03 00 04 00 1b 12 00 ff"))) { error in
            XCTAssertEqual(error as? WireError, .lengthMismatch(field: "L2CAP PDU length", declared: 3, actual: 4))
        }
    }

    func testEmptyPayloadAndChannelNames() throws {
        XCTAssertEqual(try L2CAPBasicFrame(decoding: hex("00 00 05 00")).channelID, .leSignaling)
        XCTAssertEqual(L2CAPChannelID(rawValue: 0x40).description, "cid 0x40")
    }
}
