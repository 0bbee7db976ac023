import BluetoothWire
import XCTest

final class ByteWriterTests: XCTestCase {
    func testWritesLittleEndianAndRoundTripsThroughReader() throws {
        var writer = ByteWriter()
        writer.writeUInt8(0x01)
        writer.writeUInt16(0x1234)
        writer.writeUInt24(0x12_3456)
        writer.writeUInt32(0x1234_5678)
        writer.writeUInt64(0x1234_5678_9ABC_DEF0)
        writer.writeInt8(-2)
        XCTAssertEqual(writer.bytes, Hex.bytes("01 34 12 56 34 12 78 56 34 12 f0 de bc 9a 78 56 34 12 fe"))
        var reader = ByteReader(writer.bytes)
        XCTAssertEqual(try reader.readUInt8(), 1)
        XCTAssertEqual(try reader.readUInt16(), 0x1234)
    }

    func testSetPatchesLengthFields() {
        var writer = ByteWriter()
        writer.writeUInt16(0)
        writer.writeBytes([1, 2, 3])
        writer.setUInt16(3, at: 0)
        XCTAssertEqual(writer.bytes, [3, 0, 1, 2, 3])
    }

    func testHexParsingAndDump() {
        XCTAssertEqual(Hex.bytes("0E:04-01 ab"), [0x0E, 0x04, 0x01, 0xAB])
        XCTAssertNil(Hex.bytes("0"))
        XCTAssertNil(Hex.bytes("zz"))
        XCTAssertEqual([0x0E, 0xA0].hexDump, "0e a0")
    }
}
