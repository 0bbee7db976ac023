import Foundation
import TextTools
import XCTest

/// The NSString replacements give what NSString gave for the paths and text the gateway uses.
final class TextToolsTests: XCTestCase {
    func testParentMatchesNSString() {
        for path in ["/run/gyrogate/admin.sock", "/run/gyrogate/", "/x", "/", "admin.sock", "a/b", "a/b/", "", "//a//b", "./x", "../x/y"] {
            XCTAssertEqual(PathText.parent(of: path), (path as NSString).deletingLastPathComponent, path)
        }
    }

    func testAppendingMatchesNSString() {
        for (folder, name) in [("/var/lib/gyrogate", "gyrogate.sqlite"), ("/var/lib/", "x"), ("/", "x"), ("", "x"), ("data", "x")] {
            XCTAssertEqual(PathText.appending(name, to: folder), (folder as NSString).appendingPathComponent(name), "\(folder) + \(name)")
        }
    }

    func testTrimming() {
        XCTAssertEqual("  a b \t\n".trimmed(), "a b")
        XCTAssertEqual("secret\r\n".trimmed(where: \.isNewline), "secret")
        XCTAssertEqual(" secret \n".trimmed(where: \.isNewline), " secret ")
        XCTAssertEqual(" \n ".trimmed(), "")
        XCTAssertEqual("".trimmed(), "")
        XCTAssertEqual("CapEff:\t0000003fffffffff"[...].dropFirst(7).trimmed(), "0000003fffffffff")
    }
}
