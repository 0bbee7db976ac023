import Foundation
import JSON
import SupportCore
import XCTest

/// Prints how long the parser and JSONDecoder take over a 100 KB document; asserts only that
/// they agree, since timings depend on the machine and the build (meaningful with
/// `-c release`).
final class JSONParserSpeedTests: XCTestCase {
    func testSpeedAgainstJSONDecoder() throws {
        let bytes = Self.document(approximateBytes: 100_000)
        let data = Data(bytes)
        let rounds = 20
        XCTAssertEqual(try JSONValue(parsing: bytes), try JSONDecoder().decode(JSONValue.self, from: data))

        let clock = ContinuousClock()
        let parser = try clock.measure { for _ in 0..<rounds { _ = try JSONValue(parsing: bytes) } }
        let decoder = try clock.measure { for _ in 0..<rounds { _ = try JSONDecoder().decode(JSONValue.self, from: data) } }
        let perDocument = { (total: Duration) in Double(total.components.attoseconds / 1_000_000_000_000 + total.components.seconds * 1_000_000) / Double(rounds) }
        print("JSON parse of \(bytes.count) bytes: JSONParser \(perDocument(parser)) µs, JSONDecoder \(perDocument(decoder)) µs per document")
    }

    /// Sessions as the admin API lists them: objects of strings, integers, doubles, booleans
    /// and short arrays, some strings with escapes and non-ASCII text.
    static func document(approximateBytes: Int) -> [UInt8] {
        var items: [JSONValue] = []
        var random = SplitMix64(seed: 100)
        var size = 0
        while size < approximateBytes {
            let item: JSONValue = [
                "id": .string("session-\(items.count)"), "userId": .string("user-\(random.below(50))"), "startMs": .integer(1_700_000_000_000 + Int64(random.below(1 << 30))),
                "durationS": .number(Double(random.below(100_000)) / 7), "samples": .integer(Int64(random.below(1_000_000))),
                "complete": .bool(random.below(2) == 0), "note": "Küche \"ok\" ✓\n", "peaks": [.number(0.5 + Double(random.below(1000))), -3, 2.25e-3],
                "tags": ["gyro", "acc"], "device": ["mac": "C8:4B:D2:3A:91:0F", "rssi": .integer(-Int64(random.below(90)))],
            ]
            size += item.encoded(.prettyPrinted).count + 16
            items.append(item)
        }
        return JSONValue.array(items).encoded(.prettyPrinted)
    }
}
