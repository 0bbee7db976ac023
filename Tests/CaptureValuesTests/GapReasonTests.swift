import CaptureValues
import XCTest
import SupportCore

final class GapReasonTests: XCTestCase {
    /// The stored words are what SQLite rows, the `records` documents and the reliability suite
    /// read: each reason renders as before and parses back to itself.
    func testEveryReasonRendersItsStoredWordsAndParsesBack() {
        let expected: [(GapReason, String)] = [
            (.notReceived, "notReceived"),
            (.silent, "silent"),
            (.disconnected("peer terminated (0x13)"), "disconnected (peer terminated (0x13))"),
            (.disconnected("controller lost"), "disconnected (controller lost)"),
            (.disconnected(""), "disconnected ()"),
            (.boardReset, "board reset"),
            (.reinitialised, "reinitialised"),
            (.gatewayRestarted, "gateway restarted"),
            (.initialisationFailed, "initialisation failed"),
            (.storeFull, "storeFull"),
            (.other("written by a later version"), "written by a later version"),
        ]
        for (reason, text) in expected {
            XCTAssertEqual(reason.rawValue, text)
            XCTAssertEqual("\(reason)", text)
            XCTAssertEqual(GapReason(rawValue: text), reason, text)
        }
    }

    /// Unknown or malformed text read back is kept as it was, never a trap, and written back unchanged.
    func testUnknownTextIsKeptAsItWas() {
        for text in ["", "disconnected", "disconnected (", "disconnected (x", "Silent", "notReceived ", "\u{0}", "é", ")"] {
            let reason = GapReason(rawValue: text)
            XCTAssertEqual(reason, .other(text), text)
            XCTAssertEqual(reason.rawValue, text)
        }
        XCTAssertTrue(GapReason(rawValue: "disconnected (supervision timeout)").isDisconnection)
        XCTAssertFalse(GapReason.silent.isDisconnection)
    }

    /// Random text, including the prefixes the parser looks for, always renders back to itself.
    func testAnyTextRoundTrips() {
        var generator = SplitMix64.fresh("testAnyTextRoundTrips")
        let pieces = ["disconnected (", ")", "(", "board reset", "silent", " ", "x", "é", "\u{0}"]
        for _ in 0..<2_000 {
            let text = (0..<Int.random(in: 0...4, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            XCTAssertEqual(GapReason(rawValue: text).rawValue, text, "\(text); seed \(generator.seed)")
        }
    }
}
