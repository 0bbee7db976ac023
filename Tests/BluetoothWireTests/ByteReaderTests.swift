import BluetoothWire
import XCTest

final class ByteReaderTests: XCTestCase {
    func testReadsLittleEndianFields() throws {
        var reader = ByteReader(Hex.bytes("01 34 12 56 34 12 78 56 34 12 f0 de bc 9a 78 56 34 12 ff")!)
        XCTAssertEqual(try reader.readUInt8(), 0x01)
        XCTAssertEqual(try reader.readUInt16(), 0x1234)
        XCTAssertEqual(try reader.readUInt24(), 0x12_3456)
        XCTAssertEqual(try reader.readUInt32(), 0x1234_5678)
        XCTAssertEqual(try reader.readUInt64(), 0x1234_5678_9ABC_DEF0)
        XCTAssertEqual(try reader.readInt8(), -1)
        XCTAssertTrue(reader.isAtEnd)
        XCTAssertNoThrow(try reader.expectEnd())
    }

    func testTruncatedReadThrowsWithOffsetAndDoesNotConsume() {
        var reader = ByteReader([0xAA, 0xBB, 0xCC])
        XCTAssertEqual(try reader.readUInt8(), 0xAA)
        XCTAssertThrowsError(try reader.readUInt32()) { error in
            XCTAssertEqual(error as? WireError, .truncated(needed: 4, available: 2, offset: 1))
        }
        XCTAssertEqual(reader.remainingCount, 2)
        XCTAssertEqual(try reader.readUInt16(), 0xCCBB)
        XCTAssertThrowsError(try reader.readUInt8())
    }

    func testExpectEndReportsTrailingBytes() throws {
        var reader = ByteReader([1, 2, 3])
        _ = try reader.readUInt8()
        XCTAssertThrowsError(try reader.expectEnd()) { error in
            XCTAssertEqual(error as? WireError, .trailingBytes(count: 2, offset: 1))
        }
    }

    func testSliceReaderKeepsOffsetsRelativeToSlice() throws {
        let bytes: [UInt8] = [9, 9, 9, 0x01, 0x02, 0x03]
        var reader = ByteReader(bytes[3...])
        XCTAssertEqual(try reader.readUInt16(), 0x0201)
        XCTAssertEqual(reader.offset, 2)
        XCTAssertEqual(Array(reader.readRemainingSlice()), [0x03])
        XCTAssertThrowsError(try reader.readBytes(1)) { error in
            XCTAssertEqual(error as? WireError, .truncated(needed: 1, available: 0, offset: 3))
        }
    }

    func testNegativeCountIsRejectedNotTrapped() {
        var reader = ByteReader([1, 2])
        XCTAssertThrowsError(try reader.readBytes(-1))
        XCTAssertThrowsError(try reader.skip(-5))
    }

    func testErrorDescriptionsAreActionable() {
        let text = WireError.truncated(needed: 4, available: 1, offset: 7).description
        XCTAssertTrue(text.contains("needed 4") && text.contains("offset 7"), text)
    }
}
