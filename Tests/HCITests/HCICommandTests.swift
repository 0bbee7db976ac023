import BluetoothWire
import HCI
import WireTestSupport
import XCTest

final class HCICommandTests: XCTestCase {
    let peer = try! BluetoothAddress(parsing: "C1:02:03:04:05:F6")
    let parameters = LEConnectionParameterRange(connectionIntervalMin: 6, connectionIntervalMax: 12, maxLatency: 0,
                                                supervisionTimeout: 500)

    /// Encodes, compares with the vector, decodes back, and rejects every truncation.
    func check<C: HCICommand>(_ command: C, _ vector: String, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = hex(vector)
        XCTAssertEqual(command.encode(), bytes, "encode", file: file, line: line)
        XCTAssertEqual(command.h4Bytes(), [0x01] + bytes, file: file, line: line)
        XCTAssertEqual(try C(decoding: bytes), command, "decode", file: file, line: line)
        assertEveryTruncationThrows(bytes, file: file, line: line) { _ = try C(decoding: $0) }
        XCTAssertThrowsError(try C(decoding: bytes + [0x00]), "trailing byte", file: file, line: line)
    }

    func testParameterlessCommands() {
        check(ResetCommand(), "03 0c 00")
        check(ReadBufferSizeCommand(), "05 10 00")
        check(LEReadBufferSizeCommand(), "02 20 00")
        check(ReadBDADDRCommand(), "09 10 00")
        check(LECreateConnectionCancelCommand(), "0e 20 00")
    }

    func testEventMasks() {
        check(SetEventMaskCommand(eventMask: 0x3DBF_F807_FFFB_FFFF), "01 0c 08 ff ff fb ff 07 f8 bf 3d")
        check(LESetEventMaskCommand(leEventMask: 0x1F), "01 20 08 1f 00 00 00 00 00 00 00")
    }

    func testAddressAndScanCommands() {
        check(LESetRandomAddressCommand(randomAddress: peer), "05 20 06 f6 05 04 03 02 c1")
        check(LESetScanParametersCommand(leScanType: 1, leScanInterval: 0x10, leScanWindow: 0x10, ownAddressType: .random),
              "0b 20 07 01 10 00 10 00 01 00")
        check(LESetScanEnableCommand(leScanEnable: true, filterDuplicates: false), "0c 20 02 01 00")
        check(WriteLEHostSupportCommand(), "6d 0c 02 01 00")
    }

    func testScanEnableRejectsNonBooleans() {
        XCTAssertThrowsError(try LESetScanEnableCommand(decoding: hex("0c 20 02 02 00")))
    }

    func testConnectionCommands() {
        check(LECreateConnectionCommand(leScanInterval: 0x60, leScanWindow: 0x30, peerAddressType: .random,
                                        peerAddress: peer, ownAddressType: .random,
                                        connectionParameters: .init(connectionIntervalMin: 0x18, connectionIntervalMax: 0x28,
                                                                    maxLatency: 0, supervisionTimeout: 0x48)),
              "0d 20 19 60 00 30 00 00 01 f6 05 04 03 02 c1 01 18 00 28 00 00 00 48 00 00 00 00 00")
        check(DisconnectCommand(connectionHandle: 0x40), "06 04 03 40 00 13")
        check(LEConnectionUpdateCommand(connectionHandle: 0x40, connectionParameters: parameters),
              "13 20 0e 40 00 06 00 0c 00 00 00 f4 01 00 00 00 00")
        check(LERemoteConnectionParameterRequestReplyCommand(connectionHandle: 0x40, connectionParameters: parameters),
              "20 20 0e 40 00 06 00 0c 00 00 00 f4 01 00 00 00 00")
        check(LERemoteConnectionParameterRequestNegativeReplyCommand(connectionHandle: 0x40), "21 20 03 40 00 3b")
    }

    func testAcknowledgementKinds() {
        XCTAssertEqual(LECreateConnectionCommand.acknowledgement, .commandStatus)
        XCTAssertEqual(DisconnectCommand.acknowledgement, .commandStatus)
        XCTAssertEqual(LEConnectionUpdateCommand.acknowledgement, .commandStatus)
        XCTAssertEqual(ResetCommand.acknowledgement, .commandComplete)
    }

    func testDecodingAnotherOpcodeIsRejected() {
        XCTAssertThrowsError(try ResetCommand(decoding: hex("05 10 00"))) { error in
            guard case .invalidValue = error as? WireError else { return XCTFail("\(error)") }
        }
    }
}
