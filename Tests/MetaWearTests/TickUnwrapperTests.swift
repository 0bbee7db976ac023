import XCTest

@testable import MetaWear

final class TickUnwrapperTests: XCTestCase {
    func testTicksKeepGrowingAcrossTheWrap() {
        var ticks = TickUnwrapper()
        XCTAssertEqual(ticks.unwrap(100), 100)
        XCTAssertEqual(ticks.unwrap(90), 90, "a little back (reordered) is not a lap")
        XCTAssertEqual(ticks.unwrap(UInt32.max - 5), UInt64(UInt32.max - 5))
        XCTAssertEqual(ticks.unwrap(3), 1 << 32 | 3, "the u32 wrapped")
        XCTAssertEqual(ticks.unwrap(UInt32.max - 1), UInt64(UInt32.max - 1), "a late tick of the lap before")
        XCTAssertEqual(ticks.unwrap(10), 1 << 32 | 10)
    }
}
