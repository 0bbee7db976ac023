import BluetoothWire
import HCI
import WireTestSupport
import XCTest

final class HCIEventTests: XCTestCase {
    let peer = try! BluetoothAddress(parsing: "C1:02:03:04:05:F6")

    /// Decodes the vector, compares with the expected value, re-encodes to the same bytes and
    /// rejects every truncation (the length octet makes each prefix invalid).
    func check(_ vector: String, _ expected: HCIEvent, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = hex(vector)
        XCTAssertEqual(try HCIEvent(decoding: bytes), expected, file: file, line: line)
        XCTAssertEqual(expected.encode(), bytes, file: file, line: line)
        XCTAssertEqual(expected.h4Bytes(), [0x04] + bytes, file: file, line: line)
        assertEveryTruncationThrows(bytes, file: file, line: line) { _ = try HCIEvent(decoding: $0) }
    }

    func testCommandStatus() {
        check("0f 04 00 01 0d 20", .commandStatus(.init(status: .success, numHCICommandPackets: 1, commandOpcode: .leCreateConnection)))
    }

    func testDisconnectionComplete() {
        check("05 04 00 40 00 13", .disconnectionComplete(.init(status: .success, connectionHandle: 0x40,
                                                                 reason: .remoteUserTerminatedConnection)))
    }

    func testNumberOfCompletedPacketsIsInterleaved() {
        check("13 09 02 40 00 01 00 41 00 03 00", .numberOfCompletedPackets(.init(entries: [
            .init(connectionHandle: 0x40, numCompletedPackets: 1), .init(connectionHandle: 0x41, numCompletedPackets: 3),
        ])))
        XCTAssertThrowsError(try HCIEvent(decoding: hex("13 05 02 40 00 01 00")))
    }

    func testLEConnectionComplete() {
        check("3e 13 01 00 40 00 00 01 f6 05 04 03 02 c1 18 00 00 00 48 00 05",
              .leMeta(.connectionComplete(.init(status: .success, connectionHandle: 0x40, role: .central,
                                                peerAddressType: .random, peerAddress: peer, connectionInterval: 0x18,
                                                peripheralLatency: 0, supervisionTimeout: 0x48, centralClockAccuracy: 5))))
    }

    func testLEEnhancedConnectionComplete() {
        check("3e 1f 0a 00 40 00 00 01 f6 05 04 03 02 c1 00 00 00 00 00 00 00 00 00 00 00 00 18 00 00 00 48 00 05",
              .leMeta(.enhancedConnectionComplete(.init(status: .success, connectionHandle: 0x40, role: .central,
                                                        peerAddressType: .random, peerAddress: peer, connectionInterval: 0x18,
                                                        peripheralLatency: 0, supervisionTimeout: 0x48, centralClockAccuracy: 5))))
    }

    func testLEAdvertisingReportWithTwoReports() {
        check("3e 1d 02 02 00 01 f6 05 04 03 02 c1 03 02 01 06 c4 04 01 f6 05 04 03 02 c1 04 03 09 4d 57 b0",
              .leMeta(.advertisingReport(.init(reports: [
                  .init(eventType: 0, addressType: .random, address: peer, data: [0x02, 0x01, 0x06], rssi: -60),
                  .init(eventType: 4, addressType: .random, address: peer, data: [0x03, 0x09, 0x4D, 0x57], rssi: -80),
              ]))))
    }

    func testAdvertisingReportCountBeyondBytesIsRejected() {
        XCTAssertThrowsError(try HCIEvent(decoding: hex("3e 02 02 19")))
    }

    func testLEExtendedAdvertisingReportAsBumbleSendsIt() {
        // Connectable, scannable, not legacy: what bumble's emulator reports for a legacy scan.
        check("3e 1d 0d 01 03 00 01 f6 05 04 03 02 c1 01 00 ff 7f c4 00 00 00 00 00 00 00 00 00 03 02 01 06",
              .leMeta(.extendedAdvertisingReport(.init(reports: [
                  .init(eventType: .init(rawValue: 3), addressType: .random, address: peer, rssi: -60, data: [2, 1, 6]),
              ]))))
        let type = ExtendedAdvertisingEventType(rawValue: 0x13)
        XCTAssertTrue(type.isConnectable && type.isScannable && type.isLegacy && !type.isScanResponse)
    }

    func testLEConnectionUpdateComplete() {
        check("3e 0a 03 00 40 00 06 00 00 00 f4 01",
              .leMeta(.connectionUpdateComplete(.init(status: .success, connectionHandle: 0x40, connectionInterval: 6,
                                                      peripheralLatency: 0, supervisionTimeout: 500))))
    }

    func testLERemoteConnectionParameterRequest() {
        check("3e 0b 06 40 00 06 00 0c 00 00 00 f4 01",
              .leMeta(.remoteConnectionParameterRequest(.init(connectionHandle: 0x40, intervalMin: 6, intervalMax: 12,
                                                              maxLatency: 0, timeout: 500))))
    }

    func testUnknownEventsAndSubeventsKeepTheirBytes() {
        check("10 01 01", .unknown(code: .hardwareError, parameters: [1]))
        check("ff 02 aa bb", .unknown(code: HCIEventCode(rawValue: 0xFF), parameters: [0xAA, 0xBB]))
        check("3e 03 07 40 00", .leMeta(.unknown(subevent: .dataLengthChange, parameters: [0x40, 0x00])))
    }

    func testLengthFieldMustMatch() {
        XCTAssertThrowsError(try HCIEvent(decoding: hex("0e 05 01 03 0c 00"))) { error in
            XCTAssertEqual(error as? WireError, .lengthMismatch(field: "event Parameter_Total_Length", declared: 5, actual: 4))
        }
        XCTAssertThrowsError(try HCIEvent(decoding: hex("05 05 00 40 00 13 00")))  // trailing octet in a fixed event
    }
}
