import XCTest

@testable import MetaWear

final class DataProcessorTests: XCTestCase {
    func testRemove() throws {
        XCTAssertBytes(DataProcessor.removeAll(), "09 08")
        XCTAssertBytes(DataProcessor.remove(id: 3), "09 06 03")
        XCTAssertEqual(try MetaWearPacketParser().parse(hex("09 02 04")), .processorCreated(id: 4))
    }

    /// The create sequences of the protocol reference, section 8 (BMI160 gyro data on `13 05`).
    func testTimeAccounterAndPackerCommands() {
        XCTAssertBytes(DataProcessor.createTimeAccounter(module: .gyro, register: 0x05), "09 02 13 05 ff a0 11 31 03")
        XCTAssertBytes(DataProcessor.createPacker(module: .gyro, register: 0x05, count: 2), "09 02 13 05 ff a0 10 05 01")
        XCTAssertBytes(DataProcessor.createTimeAccounter(packer: 0), "09 02 09 03 00 a0 11 31 03")
        XCTAssertEqual(DataProcessor.subscribe(id: 1).map(\.bytes), [hex("09 07 01 01"), hex("09 03 01")])
        XCTAssertBytes(DataProcessor.unsubscribe(id: 1), "09 07 01 00")
    }

    /// The reference's example output, `09 03 00 a6 33 0d 00 c1 00 b1 24 19 cd`, and two samples
    /// through a packer; anything else is not timed data.
    func testTimedSamplesDecodeTheTickAndTheSamples() throws {
        let parser = MetaWearPacketParser()
        let one = try XCTUnwrap(parser.timedSamples(hex("09 03 00 a6 33 0d 00 c1 00 b1 24 19 cd")[...]))
        XCTAssertEqual(one.processor, 0)
        XCTAssertEqual(one.tick, 0x000D_33A6)
        XCTAssertEqual(Array(one.samples), [RawTriple(x: 0x00C1, y: 0x24B1, z: Int16(bitPattern: 0xCD19))])
        let framed = hex("ff ff 09 03 01 10 00 00 00 01 00 02 00 03 00 04 00 05 00 06 00")
        let two = try XCTUnwrap(parser.timedSamples(framed[2...]))
        XCTAssertEqual(two.processor, 1)
        XCTAssertEqual(two.tick, 16)
        XCTAssertEqual(Array(two.samples), [RawTriple(x: 1, y: 2, z: 3), RawTriple(x: 4, y: 5, z: 6)])
        XCTAssertNil(parser.timedSamples(hex("09 03 00 a6 33 0d 00 c1 00 b1 24 19")[...]), "one byte short")
        XCTAssertNil(parser.timedSamples(hex("09 02 00 a6 33 0d 00 c1 00 b1 24 19 cd")[...]), "not the output register")
        XCTAssertNil(parser.timedSamples(hex("13 05 00 a6 33 0d 00 c1 00 b1 24 19 cd")[...]), "not the data processor")
    }
}
