import BluetoothWire
import XCTest

final class BluetoothAddressTests: XCTestCase {
    func testParsesAndPrintsMostSignificantFirst() throws {
        let address = try BluetoothAddress(parsing: "c1:02:03:04:05:f6")
        XCTAssertEqual(address.rawValue, 0xC102_0304_05F6)
        XCTAssertEqual(address.description, "C1:02:03:04:05:F6")
    }

    func testWireOrderIsLeastSignificantFirst() throws {
        let wire = Hex.bytes("f6 05 04 03 02 c1")!
        var reader = ByteReader(wire)
        let address = try BluetoothAddress(from: &reader)
        XCTAssertEqual(address.description, "C1:02:03:04:05:F6")
        var writer = ByteWriter()
        address.write(to: &writer)
        XCTAssertEqual(writer.bytes, wire)
        XCTAssertEqual(address.littleEndianBytes, wire)
        XCTAssertEqual(BluetoothAddress(littleEndianBytes: wire), address)
    }

    func testEveryTruncationIsRejected() {
        let wire = Hex.bytes("f6 05 04 03 02 c1")!
        for length in 0..<wire.count {
            var reader = ByteReader(Array(wire.prefix(length)))
            XCTAssertThrowsError(try BluetoothAddress(from: &reader), "length \(length)")
        }
    }

    func testRejectsMalformedText() {
        for text in ["", "AA:BB", "AA:BB:CC:DD:EE:GG", "AAA:BB:CC:DD:EE:FF", "AA:BB:CC:DD:EE:FF:00", "+A:BB:CC:DD:EE:FF"] {
            XCTAssertThrowsError(try BluetoothAddress(parsing: text), text) { error in
                guard case .malformedText = error as? WireError else { return XCTFail("\(error)") }
            }
        }
    }

    func testRandomSubtypeFromTopBits() throws {
        XCTAssertEqual(try BluetoothAddress(parsing: "C0:00:00:00:00:01").randomSubtype, .staticDevice)
        XCTAssertEqual(try BluetoothAddress(parsing: "40:00:00:00:00:01").randomSubtype, .resolvablePrivate)
        XCTAssertEqual(try BluetoothAddress(parsing: "00:00:00:00:00:01").randomSubtype, .nonResolvablePrivate)
    }

    func testAddressTypeIsOpen() {
        XCTAssertEqual(BluetoothAddressType(rawValue: 1), .random)
        XCTAssertEqual(BluetoothAddressType(rawValue: 0x42).description, "addressType(0x42)")
    }
}
