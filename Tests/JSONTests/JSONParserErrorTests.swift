import JSON
import XCTest

/// The reason a bad document gives: what is wrong and where, for the mistakes people make when
/// editing config.json by hand or writing a request body.
final class JSONParserErrorTests: XCTestCase {
    private func reason(_ text: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            let value = try JSONValue(parsing: Array(text.utf8))
            XCTFail("parsed as \(value)", file: file, line: line)
            return ""
        } catch {
            return error.reason
        }
    }

    func testTrailingCommaIsReportedAtTheComma() {
        XCTAssertEqual(reason("{\n  \"port\": 1883,\n  \"tls\": false,\n}"), "trailing comma at line 3, column 15")
        XCTAssertEqual(reason("[1, 2, ]"), "trailing comma at line 1, column 6")
    }

    func testMissingCommaBetweenMembers() {
        XCTAssertEqual(reason("{\n  \"a\": 1\n  \"b\": 2\n}"), "unexpected character '\"' at line 3, column 3 (expected ',' or '}')")
        XCTAssertEqual(reason("[1 2]"), "unexpected character '2' at line 1, column 4 (expected ',' or ']')")
    }

    func testMissingQuotes() {
        XCTAssertEqual(reason("{\"name\": \"gyro,\n \"port\": 1}"), "unterminated string starting at line 1, column 10 (it reaches the end of the line)")
        XCTAssertEqual(reason("{\"name: 1}"), "unterminated string starting at line 1, column 2")
        XCTAssertEqual(reason("{name: 1}"), "unexpected character 'n' at line 1, column 2 (expected a key in double quotes or '}')")
        XCTAssertEqual(reason("{\"a\": 1, b: 2}"), "unexpected character 'b' at line 1, column 10 (expected a key in double quotes)")
        XCTAssertEqual(reason("{\"a\": gyro\"}"), "unexpected character 'g' at line 1, column 7 (expected a value)")
    }

    func testSingleQuotesAndCommentsSayWhyTheyAreNotJSON() {
        XCTAssertEqual(reason("{'a': 1}"), "unexpected character \"'\" at line 1, column 2 (JSON strings take double quotes)")
        XCTAssertEqual(reason("{\"a\": 'x'}"), "unexpected character \"'\" at line 1, column 7 (JSON strings take double quotes)")
        XCTAssertEqual(reason("{\n  // the broker\n  \"a\": 1\n}"), "unexpected character '/' at line 2, column 3 (JSON has no comments)")
        XCTAssertEqual(reason("{\"a\": 1 /* x */}"), "unexpected character '/' at line 1, column 9 (JSON has no comments)")
    }

    func testUnterminatedDocumentsSayWhatWasExpectedAtTheEnd() {
        XCTAssertEqual(reason("{\n  \"a\": {\n    \"b\": 1\n  }\n"), "unexpected end of input at line 5, column 1 (expected ',' or '}')")
        XCTAssertEqual(reason("{\"a\": [1, 2"), "unexpected end of input at line 1, column 12 (expected ',' or ']')")
        XCTAssertEqual(reason("{\"a\":"), "unexpected end of input at line 1, column 6 (expected a value)")
        XCTAssertEqual(reason("{\"a\""), "unexpected end of input at line 1, column 5 (expected ':' after the key)")
        XCTAssertEqual(reason("\"abc"), "unterminated string starting at line 1, column 1")
        XCTAssertEqual(reason("  \n "), "unexpected end of input at line 2, column 2 (expected a value)")
        XCTAssertEqual(reason(""), "empty, expected a JSON document")
    }

    func testEscapes() {
        XCTAssertEqual(reason(#"{"a": "C:\q"}"#), #"invalid escape \q at line 1, column 10"#)
        XCTAssertEqual(reason(#""\u12G4""#), #"invalid escape \u12G at line 1, column 2"#)
        XCTAssertEqual(reason(#""\uD83D""#), #"lone surrogate \uD83D at line 1, column 2"#)
        XCTAssertEqual(reason(#""\uD83D\u0041""#), #"lone surrogate \uD83D at line 1, column 2"#)
        XCTAssertEqual(reason(#""x\uDE00""#), #"lone surrogate \uDE00 at line 1, column 3"#)
        XCTAssertEqual(reason("\"a\tb\""), "unescaped control character U+0009 in string at line 1, column 3")
    }

    func testNumbers() {
        XCTAssertEqual(reason("{\"port\": 01883}"), "leading zero in number at line 1, column 10")
        XCTAssertEqual(reason("[+1]"), "unexpected character '+' at line 1, column 2 (expected a value or ']')")
        XCTAssertEqual(reason("[.5]"), "unexpected character '.' at line 1, column 2 (expected a value or ']')")
        XCTAssertEqual(reason("[1.]"), "unexpected character ']' at line 1, column 4 (expected a digit)")
        XCTAssertEqual(reason("[-x]"), "unexpected character 'x' at line 1, column 3 (expected a digit)")
        XCTAssertEqual(reason("1e"), "unexpected end of input at line 1, column 3 (expected a digit)")
        XCTAssertEqual(reason("[NaN]"), "unexpected character 'N' at line 1, column 2 (expected a value or ']')")
        XCTAssertEqual(reason("[1e400]"), "number 1e400 out of range at line 1, column 2")
    }

    func testLiteralsAndTrailingText() {
        XCTAssertEqual(reason("{\"a\": True}"), "unexpected character 'T' at line 1, column 7 (expected a value)")
        XCTAssertEqual(reason("[nul]"), "unexpected character ']' at line 1, column 5 (expected 'null')")
        XCTAssertEqual(reason("{} x"), "unexpected character 'x' at line 1, column 4 (expected the end of the document)")
        XCTAssertEqual(reason("[1]]"), "unexpected character ']' at line 1, column 4 (expected the end of the document)")
    }

    func testColumnsCountCharactersNotBytes() {
        XCTAssertEqual(reason("{\"é✓😀\": x}"), "unexpected character 'x' at line 1, column 9 (expected a value)")
        XCTAssertEqual(reason("[“a”]"), "unexpected character '“' (U+201C) at line 1, column 2 (expected a value or ']')")
        XCTAssertEqual(reason("[\u{A0}1]"), "unexpected character '\u{A0}' (U+00A0) at line 1, column 2 (expected a value or ']')")
        XCTAssertEqual(reason("\u{FEFF}[x]"), "unexpected character 'x' at line 1, column 2 (expected a value or ']')", "a byte order mark takes no column")
    }

    func testLineBreaksOfEverySystemCount() {
        XCTAssertEqual(reason("[\r\n1,\r\nx]"), "unexpected character 'x' at line 3, column 1 (expected a value)")
        XCTAssertEqual(reason("[\r1,\rx]"), "unexpected character 'x' at line 3, column 1 (expected a value)")
    }

    func testBadBytesAreNamed() {
        XCTAssertThrowsError(try JSONValue(parsing: [0x5B, 0x31, 0x2C, 0xFF, 0x5D])) { error in
            XCTAssertEqual("\(error)", "invalid UTF-8 at line 1, column 4")
        }
        XCTAssertThrowsError(try JSONValue(parsing: Array("\"ab".utf8) + [0xED, 0xA0, 0x80, 0x22])) { error in
            XCTAssertEqual("\(error)", "invalid UTF-8 at line 1, column 4", "an encoded surrogate is not UTF-8")
        }
        XCTAssertThrowsError(try JSONValue(parsing: [0xFF, 0xFE, 0x7B, 0x00, 0x7D, 0x00])) { error in
            XCTAssertEqual("\(error)", "UTF-16 text (it starts with a UTF-16 byte order mark), expected UTF-8")
        }
        XCTAssertThrowsError(try JSONValue(parsing: [0x31, 0x00])) { error in
            XCTAssertEqual("\(error)", "unexpected character U+0000 at line 1, column 2 (expected the end of the document)")
        }
    }

    func testNestingIsLimitedWithAPosition() {
        let deep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        XCTAssertEqual(reason(deep), "nesting deeper than 512 at line 1, column 513")
        let objects = String(repeating: "{\"a\":", count: 600) + "1" + String(repeating: "}", count: 600)
        XCTAssertEqual(reason(objects), "nesting deeper than 512 at line 1, column 2561")
    }

    func testObjectParsingStillNamesWhatItFound() {
        XCTAssertThrowsError(try JSONValue.object(parsing: Array("{\"a\" 1}".utf8))) { error in
            XCTAssertEqual("\(error)", "unexpected character '1' at line 1, column 6 (expected ':' after the key)")
        }
    }
}
