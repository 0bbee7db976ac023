import Foundation
import JSON
import XCTest
import SupportCore

/// The value type every module reads and writes JSON with: parsing keeps integers apart from
/// other numbers, accessors never trap, and the bytes written match what JSONSerialization
/// wrote before (subscribers and tests compare them).
final class JSONValueTests: XCTestCase {
    func testParsingKeepsTypesApart() throws {
        let value = try JSONValue(parsing: Array(#"{"b": true, "i": 3, "d": 2.5, "s": "x", "n": null, "a": [1, "y"], "o": {"k": -7}}"#.utf8))
        XCTAssertEqual(value["b"], .bool(true))
        XCTAssertEqual(value["i"], .integer(3))
        XCTAssertEqual(value["d"], .number(2.5))
        XCTAssertEqual(value["s"], .string("x"))
        XCTAssertEqual(value["n"], .null)
        XCTAssertEqual(value["a"], [1, "y"])
        XCTAssertEqual(value["o"]?["k"]?.int, -7)
        XCTAssertNil(value["missing"])
    }

    func testAccessorsSayNilForAnotherType() throws {
        let value: JSONValue = ["flag": true, "count": 2, "whole": 4.0, "half": 0.5, "big": 1e300, "name": "n", "list": [1]]
        XCTAssertEqual(value["flag"]?.bool, true)
        XCTAssertNil(value["flag"]?.int, "a boolean is not a number")
        XCTAssertEqual(value["count"]?.int, 2)
        XCTAssertEqual(value["count"]?.double, 2.0)
        XCTAssertEqual(value["whole"]?.int, 4, "a number with an integer value reads as an integer")
        XCTAssertNil(value["half"]?.int)
        XCTAssertNil(value["big"]?.int, "out of range is nil, not a trap")
        XCTAssertNil(value["name"]?.double)
        XCTAssertEqual(value["list"]?[0], 1)
        XCTAssertNil(value["list"]?[1])
        XCTAssertNil(value["list"]?[-1])
        XCTAssertNil(value["name"]?["x"])
        XCTAssertEqual(value["name"]?.text, "n")
        XCTAssertEqual(value["half"]?.text, "0.5")
        XCTAssertEqual(value["list"]?.text, "[1]")
    }

    func testBadBytesAreAnErrorNeverATrap() {
        let inputs = ["", "{", "[1,", "{\"a\" 1}", "nul", "1 2", "\u{FF}", "[1e400]", String(repeating: "[", count: 100_000)]
        for input in inputs {
            XCTAssertThrowsError(try JSONValue(parsing: Array(input.utf8)), input.prefix(20).description) { error in
                // Callers say "… is not valid JSON: <reason>"; the reason says where.
                XCTAssertTrue("\(error)".contains(" at line 1, column ") || input.isEmpty, "\(error)")
            }
        }
        var invalidUTF8 = Array("\"a".utf8)
        invalidUTF8 += [0xC3, 0x28, 0x22]
        XCTAssertThrowsError(try JSONValue(parsing: invalidUTF8))
    }

    func testObjectParsingNamesWhatItFound() {
        XCTAssertThrowsError(try JSONValue.object(parsing: Array("[1]".utf8))) { error in
            XCTAssertEqual("\(error)", "expected a JSON object, found an array")
        }
    }

    func testEncodingMatchesJSONSerialization() throws {
        let value: JSONValue = [
            "integer": 3, "negative": -42, "whole": 3.0, "tenth": 0.1, "small": 1e-7, "large": 1e20, "fraction": 123456789.123,
            "rounding": 0.30000000000000004, "true": true, "false": false, "null": nil, "slash": "a/b", "quote": "say \"hi\"\n\t\u{1}",
            "unicode": "é✓😀", "empty object": [:], "empty array": [], "nested": ["list": [1, 2.5, "x", nil, ["k": "v"]]],
            "max": .integer(Int64.max), "min": .integer(Int64.min),
        ]
        let old: [String: Any] = [
            "integer": 3, "negative": -42, "whole": 3.0, "tenth": 0.1, "small": 1e-7, "large": 1e20, "fraction": 123456789.123,
            "rounding": 0.30000000000000004, "true": true, "false": false, "null": NSNull(), "slash": "a/b", "quote": "say \"hi\"\n\t\u{1}",
            "unicode": "é✓😀", "empty object": [String: Any](), "empty array": [Any](), "nested": ["list": [1, 2.5, "x", NSNull(), ["k": "v"]]],
            "max": Int64.max, "min": Int64.min,
        ]
        // Keys without '_', digits or capitals: JSONSerialization's locale order and code point
        // order agree on them.
        for (layout, options) in [(JSONLayout.sortedKeys, JSONSerialization.WritingOptions.sortedKeys),
                                  ([.sortedKeys, .withoutEscapingSlashes], [.sortedKeys, .withoutEscapingSlashes]),
                                  ([.sortedKeys, .prettyPrinted], [.sortedKeys, .prettyPrinted])] {
            let expected = try JSONSerialization.data(withJSONObject: old, options: options)
            XCTAssertEqual(String(decoding: value.encoded(layout), as: UTF8.self), String(decoding: expected, as: UTF8.self))
        }
    }

    /// The writer is the JSON module's own; what it writes must stay what JSONEncoder wrote for
    /// `JSONValue`, in every layout, for any value (sorted keys: JSONEncoder's order otherwise
    /// follows the dictionary's).
    func testEncodingMatchesJSONEncoderForRandomValues() throws {
        var random = SplitMix64.fresh("testEncodingMatchesJSONEncoderForRandomValues")
        let pieces = ["a", "B", "_", "/", "\"", "\\", "\n", "\u{1}", "\u{1f}", "\u{7f}", "é", "😀", "\u{2028}", " ", "9"]
        func text() -> String { (0..<Int.random(in: 0...4, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined() }
        func number() -> Double {
            switch Int.random(in: 0...5, using: &random) {
            case 0: Double(Int.random(in: -1000...1000, using: &random))
            case 1: Double.random(in: -1...1, using: &random)
            case 2: Double.random(in: -1e6...1e6, using: &random).rounded() / 1000
            case 3: Double(sign: .plus, exponent: Int.random(in: -40...70, using: &random), significand: 1.5)
            case 4: -0.0
            default: Double(bitPattern: UInt64.random(in: 0...0x7FEF_FFFF_FFFF_FFFF, using: &random))
            }
        }
        func value(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0...(depth > 3 ? 4 : 6), using: &random) {
            case 0: .null
            case 1: .bool(Bool.random(using: &random))
            case 2: .integer(Int64.random(in: .min ... .max, using: &random))
            case 3: .number(number())
            case 4: .string(text())
            case 5: .array((0..<Int.random(in: 0...4, using: &random)).map { _ in value(depth + 1) })
            default: .object(Dictionary((0..<Int.random(in: 0...4, using: &random)).map { _ in (text(), value(depth + 1)) },
                                        uniquingKeysWith: { first, _ in first }))
            }
        }
        let layouts: [(JSONLayout, JSONEncoder.OutputFormatting)] = [
            (.sortedKeys, .sortedKeys), ([.sortedKeys, .withoutEscapingSlashes], [.sortedKeys, .withoutEscapingSlashes]),
            ([.sortedKeys, .prettyPrinted], [.sortedKeys, .prettyPrinted]),
        ]
        for round in 0..<2_000 {
            let document = value(0)
            for (layout, formatting) in layouts {
                let encoder = JSONEncoder()
                encoder.outputFormatting = formatting
                let expected = String(decoding: try encoder.encode(document), as: UTF8.self)
                XCTAssertEqual(String(decoding: document.encoded(layout), as: UTF8.self), expected, "round \(round), seed \(random.seed)")
            }
        }
    }

    func testSortedKeysAreInCodePointOrder() {
        let value: JSONValue = ["b": 1, "a_b": 2, "a2": 3, "B": 4, "a": 5]
        XCTAssertEqual(String(decoding: value.encoded(.sortedKeys), as: UTF8.self), #"{"B":4,"a":5,"a2":3,"a_b":2,"b":1}"#)
    }

    func testNonFiniteNumbersAreWrittenAsNull() {
        let value: JSONValue = ["nan": .number(.nan), "infinity": .number(.infinity)]
        XCTAssertEqual(String(decoding: value.encoded(.sortedKeys), as: UTF8.self), #"{"infinity":null,"nan":null}"#)
    }

    func testRoundTrip() throws {
        let value: JSONValue = ["a": [1, 2.5, "x", nil, true], "b": ["c": "d/e"]]
        XCTAssertEqual(try JSONValue(parsing: value.encoded()), value)
        XCTAssertEqual(try JSONValue(parsing: value.encoded([.prettyPrinted, .withoutEscapingSlashes])), value)
    }

    func testSwiftValuesHaveTheirJSONForm() {
        let none: Int? = nil
        XCTAssertEqual(none.jsonValue, .null)
        XCTAssertEqual(Optional(5).jsonValue, .integer(5))
        XCTAssertEqual(UInt64.max.jsonValue, .number(Double(UInt64.max)))
        XCTAssertEqual(Set(["b", "a"]).jsonValue, ["a", "b"])
        XCTAssertEqual(["k": [1, 2]].jsonValue, ["k": [1, 2]])
    }
}
