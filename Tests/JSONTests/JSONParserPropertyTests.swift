import Foundation
import JSON
import XCTest
import SupportCore

/// Properties over many inputs: what `encoded()` writes parses back to the same value, and no
/// damaged document traps; every rejection still says where.
final class JSONParserPropertyTests: XCTestCase {
    func testRandomValuesRoundTrip() throws {
        var random = SplitMix64(seed: 2026)
        for round in 0..<400 {
            let value = randomValue(&random, depth: 0)
            for layout: JSONLayout in [.sortedKeys, .compact, [.prettyPrinted, .withoutEscapingSlashes]] {
                let bytes = value.encoded(layout)
                XCTAssertEqual(try JSONValue(parsing: bytes), value, "round \(round): \(String(decoding: bytes, as: UTF8.self))")
            }
            // The same bytes through JSONDecoder: both readers agree on valid documents.
            let bytes = value.encoded()
            XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: Data(bytes)), try JSONValue(parsing: bytes), "round \(round)")
        }
    }

    func testDamagedDocumentsNeverTrapAndSayWhere() {
        let documents = [
            #"{"gatewayId": "pi-küche", "mqtt": {"host": "broker.local", "port": 1883, "tls": false}, "gyro": {"odrHz": 100, "rangeDps": 2000.5}}"#,
            "[\n  1, -2.5e-3, true, false, null,\n  \"\\u00e9\\ud83d\\ude00\\n\\\"\", [], {}\n]\n",
            "{\"ids\": [\"a/b\", \"c\\\\d\"], \"nested\": [[[{\"x\": [0, -0, 1E+2]}]]], \"✓\": \"😀\"}",
        ]
        let replacements: [UInt8] = Array("\"\\{}[],:0e-.u/ tn".utf8) + [0x00, 0x0A, 0x80, 0xC3, 0xED, 0xF4, 0xFF]
        var tried = 0
        for document in documents {
            let bytes = Array(document.utf8)
            XCTAssertNoThrow(try JSONValue(parsing: bytes), document)
            var variants: [[UInt8]] = (0..<bytes.count).map { Array(bytes[..<$0]) }
            for offset in bytes.indices {
                var removed = bytes
                removed.remove(at: offset)
                variants.append(removed)
                for replacement in replacements {
                    var replaced = bytes
                    replaced[offset] = replacement
                    variants.append(replaced)
                    var inserted = bytes
                    inserted.insert(replacement, at: offset)
                    variants.append(inserted)
                }
            }
            for variant in variants {
                tried += 1
                do {
                    _ = try JSONValue(parsing: variant)
                } catch {
                    let reason = error.reason
                    XCTAssertTrue(reason.contains(" at line ") || reason == "empty, expected a JSON document", reason)
                    XCTAssertFalse(reason.hasPrefix("not valid JSON"), reason)
                }
            }
        }
        XCTAssertGreaterThan(tried, 10_000)
    }

    private func randomValue(_ random: inout SplitMix64, depth: Int) -> JSONValue {
        switch random.below(depth < 4 ? 9 : 6) {
        case 0: return .null
        case 1: return .bool(random.next() % 2 == 0)
        case 2: return .integer(randomInteger(&random))
        case 3: return .number(randomDouble(&random))
        case 4, 5: return .string(randomString(&random))
        case 6, 7: return .array((0..<random.below(5)).map { _ in randomValue(&random, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<random.below(5) { members[randomString(&random)] = randomValue(&random, depth: depth + 1) }
            return .object(members)
        }
    }

    private func randomInteger(_ random: inout SplitMix64) -> Int64 {
        switch random.below(4) {
        case 0: [Int64.min, Int64.max, 0, -1, 1 << 53, -(1 << 53) - 1][random.below(6)]
        case 1: Int64(bitPattern: random.next())
        default: Int64(random.below(2000)) - 1000
        }
    }

    /// A double that is not integral in `Int64`'s range: such a value is written as an integer
    /// (`2.0` as `2`) and reads back as `.integer`, by design.
    private func randomDouble(_ random: inout SplitMix64) -> Double {
        while true {
            let candidate = switch random.below(3) {
            case 0: Double(bitPattern: random.next())
            case 1: Double(Int64(random.below(2_000_000)) - 1_000_000) / 1000
            default: [0.1, -2.5, 1e-7, Double.leastNonzeroMagnitude, 1.7976931348623157e308, 1e20, -1e300, 0.30000000000000004][random.below(8)]
            }
            if candidate.isFinite, Int64(exactly: candidate) == nil { return candidate }
        }
    }

    private func randomString(_ random: inout SplitMix64) -> String {
        let pool: [Unicode.Scalar] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", "é", "✓", "\u{2028}", "\u{FEFF}", "😀", "\u{10FFFF}"]
        var text = String.UnicodeScalarView()
        for _ in 0..<random.below(12) { text.append(pool[random.below(pool.count)]) }
        return String(text)
    }
}
