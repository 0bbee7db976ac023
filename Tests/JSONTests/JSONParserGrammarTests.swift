import Foundation
import JSON
import XCTest
import SupportCore

/// What the parser accepts: RFC 8259 and nothing more, with numbers split into integers and
/// doubles exactly as JSONDecoder split them when it decoded `JSONValue`.
final class JSONParserGrammarTests: XCTestCase {
    private func parse(_ text: String) throws -> JSONValue { try JSONValue(parsing: Array(text.utf8)) }

    /// What JSONDecoder made of the same text, through `JSONValue`'s `Decodable` conformance.
    private func decoded(_ text: String) -> JSONValue? { try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) }

    func testNumbersAreClassifiedAsJSONDecoderDid() throws {
        let spellings = [
            "0", "-0", "0.0", "-0.0", "1", "-1", "1.0", "4.0", "1e2", "1E2", "1e+2", "1.0e+2", "-1.0e2", "100e-2", "0.1e1", "2.5e1",
            "25e-1", "1.5", "0.1", "1e-7", "1e-400", "-1e-400", "2e-324", "4.9e-324", "1e0", "0e0", "0.0e5", "1e18", "1e19", "1e20",
            "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809", "9223372036854775807.0",
            "-9223372036854775808.0", "-9223372036854775809.0", "9007199254740992", "9007199254740993", "9007199254740993.0",
            "9007199254740993.5", "-9007199254740993.0", "9007199254740993e0", "900719925474099.3e1", "0.0009007199254740993e19",
            "12345678901234567890", "18446744073709551615", "123456789012345678901234567890", "123456789012345678901234567890e-20",
            "1.7976931348623157e308", "1.0000000000000001", "4.9999999999999999999", "123.456", "-0.000001", "1" + String(repeating: "0", count: 18),
            "9007199254740993.000000000000000000", "90071992547409930000e-4", "0.0000000000000000000009007199254740993e38",
            "9007199254740993.50000000000000000000", "18446744073709551615e-1", "18446744073709551616e-1", "922337203685477580.79e1",
            "9007199254740993.9999999999999999999999999", "-9223372036854775807.0", "9223372036854775806.5",
        ]
        for text in spellings {
            XCTAssertEqual(try parse(text), decoded(text), text)
        }
    }

    func testRandomNumbersAreClassifiedAsJSONDecoderDid() throws {
        var random = SplitMix64(seed: 8259)
        for _ in 0..<3000 {
            var text = random.next() % 2 == 0 ? "-" : ""
            let integerDigits = Int(random.next() % 20) + 1
            text += random.next() % 5 == 0 ? "0" : String(Int(random.next() % 9) + 1) + random.digits(integerDigits - 1)
            if random.next() % 2 == 0 { text += "." + random.digits(Int(random.next() % 16) + 1) }
            if random.next() % 2 == 0 { text += "e" + ["", "+", "-"][Int(random.next() % 3)] + String(random.next() % 30) }
            XCTAssertEqual(try parse(text), decoded(text), text)
        }
    }

    func testOutOfRangeNumbersAreErrorsAsBefore() {
        for text in ["1e400", "-1e400", "[1e400]", "1.8e308", "1" + String(repeating: "0", count: 400)] {
            XCTAssertThrowsError(try parse(text), text)
            XCTAssertNil(decoded(text), text)
        }
    }

    func testStringsAndEscapes() throws {
        XCTAssertEqual(try parse(#""\"\\\/\b\f\n\r\t""#), .string("\"\\/\u{8}\u{C}\n\r\t"))
        XCTAssertEqual(try parse(#""\u0000\u001f\u00e9\u00E9\u2713""#), .string("\u{0}\u{1F}éé✓"))
        XCTAssertEqual(try parse(#""\ud83d\ude00 \uDBFF\uDFFF""#), .string("😀 \u{10FFFF}"))
        XCTAssertEqual(try parse("\"é✓😀\u{7F}\""), .string("é✓😀\u{7F}"))
        XCTAssertEqual(try parse(#""a\nb" "#), .string("a\nb"))
        XCTAssertEqual(try parse(#""""#), .string(""))
        for text in [#""\x""#, #""\U0041""#, #""\u00""#, #""\u"#, #""\"#, #""\uD800\n""#, #""\uDC00\uD800""#, "\"\u{1}\""] {
            XCTAssertThrowsError(try parse(text), text)
        }
    }

    func testInvalidUTF8IsAnError() {
        let cases: [[UInt8]] = [[0x80], [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF0, 0x80, 0x80, 0x80],
                                [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xC3], [0xE2, 0x9C], [0xFE], [0xFF]]
        for sequence in cases {
            XCTAssertThrowsError(try JSONValue(parsing: [0x22] + sequence + [0x22]), "\(sequence)")
            XCTAssertThrowsError(try JSONValue(parsing: sequence), "\(sequence)")
        }
        XCTAssertEqual(try JSONValue(parsing: [0x22, 0xF4, 0x8F, 0xBF, 0xBF, 0x22]), .string("\u{10FFFF}"))
    }

    func testOnlyRFCStructureIsAccepted() throws {
        XCTAssertEqual(try parse(" \t\r\n[ 1 , { \"a\" : [ ] , \"b\" : { } } ]\n"), [1, ["a": [], "b": [:]]])
        XCTAssertEqual(try parse("true"), true)
        XCTAssertEqual(try parse("null"), nil)
        XCTAssertEqual(try parse("\u{FEFF}{}"), [:], "a UTF-8 byte order mark is skipped, as JSONDecoder did")
        let rejected = ["[1,]", "{\"a\":1,}", "[,]", "{,}", "[1,,2]", "{\"a\"}", "[\"a\":1]", "{1:2}", "'a'", "NaN", "Infinity", "-Infinity",
                        "+1", ".5", "1.", "0x10", "00", "-01", "1e+", "tru", "nulls", "\u{0B}1", "\u{0C}1", "[1]x", "{}{}", "\u{A0}1", "//\n1"]
        for text in rejected {
            XCTAssertThrowsError(try parse(text), text)
        }
    }

    func testARepeatedKeyKeepsItsLastValue() throws {
        XCTAssertEqual(try parse(#"{"a": 1, "b": 2, "a": 3}"#), ["a": 3, "b": 2])
    }

    func testNestingUpTo512Parses() throws {
        let arrays = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        XCTAssertNotNil(try parse(arrays).array)
        let objects = String(repeating: "{\"a\":", count: 512) + "1" + String(repeating: "}", count: 512)
        XCTAssertNotNil(try parse(objects).object)
        XCTAssertThrowsError(try parse(String(repeating: "[", count: 1_000_000)))
    }

    /// Admin requests are parsed on the concurrency pool's threads, whose stacks are smaller
    /// than the main thread's.
    func testTheDeepestNestingParsesOffTheMainThread() async throws {
        let arrays = String(repeating: "[{\"a\":", count: 256) + "1" + String(repeating: "}]", count: 256)
        let parsed = try await Task.detached { try JSONValue(parsing: Array(arrays.utf8)) }.value
        XCTAssertNotNil(parsed.array)
    }
}

/// The grammar tests' draws on the shared generator (SupportCore's SplitMix64).
extension SplitMix64 {
    mutating func digits(_ count: Int) -> String { String((0..<count).map { _ in Character(String(next() % 10)) }) }
}
