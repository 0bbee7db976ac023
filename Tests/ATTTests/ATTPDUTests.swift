import ATT
import BluetoothWire
import WireTestSupport
import XCTest

final class ATTPDUTests: XCTestCase {
    /// Decodes, compares, re-encodes. When `strict`, every truncation must throw; otherwise a
    /// truncation may decode (a shorter value is still a valid PDU) but never to the same PDU.
    func check(_ vector: String, _ expected: ATTPDU, strict: Bool = true, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = hex(vector)
        XCTAssertEqual(try ATTPDU(decoding: bytes), expected, file: file, line: line)
        XCTAssertEqual(expected.encode(), bytes, file: file, line: line)
        XCTAssertEqual(expected.opcode.rawValue, bytes.first, file: file, line: line)
        if strict {
            assertEveryTruncationThrows(bytes, file: file, line: line) { _ = try ATTPDU(decoding: $0) }
        } else {
            XCTAssertThrowsError(try ATTPDU(decoding: []), file: file, line: line)
            for length in 1..<bytes.count {
                if let pdu = try? ATTPDU(decoding: Array(bytes.prefix(length))) {
                    XCTAssertNotEqual(pdu, expected, file: file, line: line)
                }
            }
        }
    }

    func testErrorResponse() {
        check("01 08 04 00 0a", .errorResponse(.init(requestOpcodeInError: .readByTypeRequest, attributeHandleInError: 4,
                                                     errorCode: .attributeNotFound)))
    }

    func testExchangeMTU() {
        check("02 f7 00", .exchangeMTURequest(.init(clientRxMTU: 247)))
        check("03 17 00", .exchangeMTUResponse(.init(serverRxMTU: 23)))
    }

    func testFindInformation() {
        check("04 01 00 ff ff", .findInformationRequest(.init(startingHandle: 1, endingHandle: 0xFFFF)))
        check("05 01 04 00 02 29 05 00 01 29", .findInformationResponse(.init(format: .bits16, entries: [
            .init(handle: 4, type: BluetoothUUID(uuid16: 0x2902)), .init(handle: 5, type: BluetoothUUID(uuid16: 0x2901)),
        ])), strict: false)
        check("05 02 0c 00 5a e7 ba fb 4c 46 dd d9 95 91 cb 85 00 90 6a 32", .findInformationResponse(.init(format: .bits128, entries: [
            .init(handle: 0x0C, type: try! BluetoothUUID(parsing: "326A9000-85CB-9195-D9DD-464CFBBAE75A")),
        ])))
        XCTAssertThrowsError(try ATTPDU(decoding: hex("05 03 04 00 02 29")))
        XCTAssertThrowsError(try ATTPDU(decoding: hex("05 01")))
    }

    func testReadByType() {
        check("08 01 00 ff ff 03 28", .readByTypeRequest(.init(startingHandle: 1, endingHandle: 0xFFFF,
                                                               attributeType: BluetoothUUID(uuid16: 0x2803))))
        check("09 07 02 00 02 03 00 00 2a 04 00 0a 05 00 01 2a", .readByTypeResponse(.init(attributeDataList: [
            .init(handle: 2, value: hex("02 03 00 00 2a")), .init(handle: 4, value: hex("0a 05 00 01 2a")),
        ])), strict: false)
        XCTAssertThrowsError(try ATTPDU(decoding: hex("09 01 02")))
        XCTAssertThrowsError(try ATTPDU(decoding: hex("08 01 00 ff ff 03")))
    }

    func testReadByGroupType() {
        check("10 01 00 ff ff 00 28", .readByGroupTypeRequest(.init(startingHandle: 1, endingHandle: 0xFFFF,
                                                                    attributeGroupType: BluetoothUUID(uuid16: 0x2800))))
        check("11 06 01 00 05 00 00 18 06 00 09 00 01 18", .readByGroupTypeResponse(.init(attributeDataList: [
            .init(attributeHandle: 1, endGroupHandle: 5, value: [0x00, 0x18]),
            .init(attributeHandle: 6, endGroupHandle: 9, value: [0x01, 0x18]),
        ])), strict: false)
        XCTAssertThrowsError(try ATTPDU(decoding: hex("11 03 01 00 05")))
    }

    func testReadAndReadBlob() {
        check("0a 03 00", .readRequest(.init(attributeHandle: 3)))
        check("0b 4d 57", .readResponse(.init(attributeValue: [0x4D, 0x57])), strict: false)
        check("0c 03 00 16 00", .readBlobRequest(.init(attributeHandle: 3, valueOffset: 22)))
        check("0d 01 02", .readBlobResponse(.init(partAttributeValue: [1, 2])), strict: false)
    }

    func testWrites() {
        check("12 0d 00 01 00", .writeRequest(.init(attributeHandle: 0x0D, attributeValue: [1, 0])), strict: false)
        check("13", .writeResponse(.init()))
        check("52 0f 00 13 01 01", .writeCommand(.init(attributeHandle: 0x0F, attributeValue: [0x13, 0x01, 0x01])), strict: false)
        XCTAssertThrowsError(try ATTPDU(decoding: hex("13 00")))
    }

    func testHandleValues() {
        check("1b 12 00 03 04 01 02", .handleValueNotification(.init(attributeHandle: 0x12, attributeValue: [3, 4, 1, 2])),
              strict: false)
        check("1d 12 00 ff", .handleValueIndication(.init(attributeHandle: 0x12, attributeValue: [0xFF])), strict: false)
        check("1e", .handleValueConfirmation(.init()))
        XCTAssertThrowsError(try ATTPDU(decoding: hex("1b 12")))
    }

    func testUnknownOpcodesKeepTheirBytes() {
        check("16 0d 00 00 00 aa", .unknown(opcode: .prepareWriteRequest, parameters: hex("0d 00 00 00 aa")), strict: false)
        check("d2 0d 00", .unknown(opcode: .signedWriteCommand, parameters: [0x0D, 0x00]), strict: false)
        XCTAssertTrue(ATTOpcode.signedWriteCommand.isCommand && ATTOpcode.signedWriteCommand.hasAuthenticationSignature)
    }
}
