import BluetoothWire
import XCTest

final class BluetoothUUIDTests: XCTestCase {
    // MetaWear service, docs/metawear-protocol.md.
    let metaWearService = "326A9000-85CB-9195-D9DD-464CFBBAE75A"
    let metaWearWire = Hex.bytes("5a e7 ba fb 4c 46 dd d9 95 91 cb 85 00 90 6a 32")!

    func testSixteenBitUUIDEqualsItsBaseForm() throws {
        let short = BluetoothUUID(uuid16: 0x180D)
        let long = try BluetoothUUID(parsing: "0000180d-0000-1000-8000-00805f9b34fb")
        XCTAssertEqual(short, long)
        XCTAssertEqual(long.uuid16, 0x180D)
        XCTAssertEqual(long.description, "180D")
        XCTAssertEqual(try BluetoothUUID(parsing: "0x2902"), BluetoothUUID(uuid16: 0x2902))
    }

    func testOneTwentyEightBitRoundTrips() throws {
        let uuid = try BluetoothUUID(parsing: metaWearService.lowercased())
        XCTAssertNil(uuid.uuid16)
        XCTAssertEqual(uuid.description, metaWearService)
        var reader = ByteReader(metaWearWire)
        XCTAssertEqual(try BluetoothUUID(from: &reader, format: .bits128), uuid)
        var writer = ByteWriter()
        uuid.write(to: &writer, format: .bits128)
        XCTAssertEqual(writer.bytes, metaWearWire)
    }

    func testSixteenBitWireForm() throws {
        var reader = ByteReader([0x00, 0x28])
        let uuid = try BluetoothUUID(from: &reader, length: 2)
        XCTAssertEqual(uuid, BluetoothUUID(uuid16: 0x2800))
        var writer = ByteWriter()
        uuid.write(to: &writer, format: uuid.shortestWireFormat)
        XCTAssertEqual(writer.bytes, [0x00, 0x28])
    }

    func testTruncationsAndBadLengthsAreRejected() {
        for length in 0..<16 {
            var reader = ByteReader(Array(metaWearWire.prefix(length)))
            XCTAssertThrowsError(try BluetoothUUID(from: &reader, format: .bits128))
        }
        var reader = ByteReader([1, 2, 3])
        XCTAssertThrowsError(try BluetoothUUID(from: &reader, length: 3))
    }

    func testRejectsMalformedText() {
        for text in ["", "18", "180G", "+18D", "+26A9000-85CB-9195-D9DD-464CFBBAE75A", "326A9000-85CB-9195-D9DD-464CFBBAE75", "326A900085CB9195D9DD464CFBBAE75A"] {
            XCTAssertThrowsError(try BluetoothUUID(parsing: text), text)
        }
    }
}
