import XCTest

@testable import MetaWear

final class RawTriplesTests: XCTestCase {
    func testRawTriplesCollection() {
        let a = RawTriple(x: 1, y: 2, z: 3)
        let b = RawTriple(x: 4, y: 5, z: 6)
        XCTAssertEqual(Array(RawTriples(a)), [a])
        XCTAssertEqual(Array(RawTriples(a, b, a)), [a, b, a])
        XCTAssertEqual(RawTriples([a, b]).count, 2)
        XCTAssertEqual(RawTriples([a]), RawTriples(a))
        XCTAssertNotEqual(RawTriples([a, b]), RawTriples(a))
    }
}
