import TextTools
import XCTest

final class ReplacingTests: XCTestCase {
    func testReplacesEveryOccurrence() {
        XCTAssertEqual("C4:BE:84:00:00:01".replacingEvery(":", with: ""), "C4BE84000001")
        XCTAssertEqual(#"a\b"c"#.replacingEvery("\\", with: "\\\\").replacingEvery("\"", with: "\\\""), #"a\\b\"c"#)
        XCTAssertEqual("a+b+".replacingEvery("+", with: " "), "a b ")
        XCTAssertEqual("".replacingEvery("x", with: "y"), "")
        XCTAssertEqual("é+é"[...].replacingEvery("+", with: "→"), "é→é")
    }
}
