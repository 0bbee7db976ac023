import XCTest

@testable import MetaWear

final class DataProcessorTests: XCTestCase {
    func testRemove() throws {
        XCTAssertBytes(DataProcessor.removeAll(), "09 08")
        XCTAssertBytes(DataProcessor.remove(id: 3), "09 06 03")
        XCTAssertEqual(try MetaWearPacketParser().parse(hex("09 02 04")), .processorCreated(id: 4))
    }
}
