import XCTest

@testable import MetaWear

final class EventTests: XCTestCase {
    func testRemove() throws {
        XCTAssertBytes(Event.removeAll(), "0a 05")
        XCTAssertBytes(Event.remove(id: 1), "0a 04 01")
        XCTAssertEqual(try MetaWearPacketParser().parse(hex("0a 02 01")), .eventCreated(id: 1))
    }
}
