import BluetoothWire
import L2CAP
import WireTestSupport
import XCTest

final class L2CAPSignalTests: XCTestCase {
    func check(_ vector: String, _ expected: L2CAPSignal, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = hex(vector)
        XCTAssertEqual(try L2CAPSignal(decoding: bytes), expected, file: file, line: line)
        XCTAssertEqual(expected.encode(), bytes, file: file, line: line)
        assertEveryTruncationThrows(bytes, file: file, line: line) { _ = try L2CAPSignal(decoding: $0) }
    }

    func testConnectionParameterUpdateRequest() {
        check("12 01 08 00 06 00 0c 00 00 00 f4 01",
              .connectionParameterUpdateRequest(.init(identifier: 1, intervalMin: 6, intervalMax: 12, latency: 0, timeout: 500)))
    }

    func testConnectionParameterUpdateResponse() {
        check("13 01 02 00 00 00", .connectionParameterUpdateResponse(.init(identifier: 1, result: .accepted)))
        check("13 07 02 00 01 00", .connectionParameterUpdateResponse(.init(identifier: 7, result: .rejected)))
    }

    func testCommandReject() {
        check("01 02 02 00 00 00", .commandReject(.notUnderstood(identifier: 2)))
        check("01 03 04 00 01 00 17 00", .commandReject(.init(identifier: 3, reason: .signalingMTUExceeded, data: [0x17, 0x00])))
    }

    func testUnknownCodeKeepsItsData() {
        check("14 05 02 00 aa bb", .unknown(code: .leCreditBasedConnectionRequest, identifier: 5, data: [0xAA, 0xBB]))
    }

    func testFixedSizeCommandsRejectExtraBytes() {
        XCTAssertThrowsError(try L2CAPSignal(decoding: hex("13 01 03 00 00 00 00")))
        XCTAssertThrowsError(try L2CAPSignal(decoding: hex("12 01 09 00 06 00 0c 00 00 00 f4 01 00")))
    }

    func testFrameWrapsOnTheSignalingChannel() {
        let frame = L2CAPSignal.commandReject(.notUnderstood(identifier: 9)).frame()
        XCTAssertEqual(frame.encode(), hex("06 00 05 00 01 09 02 00 00 00"))
    }
}
