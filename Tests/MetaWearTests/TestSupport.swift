import XCTest

@testable import MetaWear

/// `hex("13 03 28 00")` → `[0x13, 0x03, 0x28, 0x00]`. Traps on malformed test fixtures.
func hex(_ string: String) -> [UInt8] {
    string.split(separator: " ").map { UInt8($0, radix: 16)! }
}

func XCTAssertBytes(
    _ command: MetaWearCommand, _ expected: String, file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertEqual(command.bytes, hex(expected), "\(command) != \(expected)", file: file, line: line)
}

func XCTAssertBytes(
    _ commands: [MetaWearCommand], _ expected: [String], file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertEqual(commands.map(\.bytes), expected.map(hex), "\(commands) != \(expected)", file: file, line: line)
}

func XCTAssertTriple(
    _ value: ScaledTriple<Double>, _ x: Double, _ y: Double, _ z: Double, accuracy: Double = 0.0005,
    file: StaticString = #filePath, line: UInt = #line
) {
    XCTAssertEqual(value.x, x, accuracy: accuracy, "x", file: file, line: line)
    XCTAssertEqual(value.y, y, accuracy: accuracy, "y", file: file, line: line)
    XCTAssertEqual(value.z, z, accuracy: accuracy, "z", file: file, line: line)
}

/// Module-info fixtures from `test/common.py` (protocol reference, 2.1).
enum Fixtures {
    static let metaMotionR = [
        "03 80 01 01", "13 80 00 01", "0b 80 00 02 08 80 2b 00 00", "11 80 00 03", "02 80 00 00", "14 80 00 00",
        "16 80",
    ]
    static let metaMotionS = [
        "03 80 04 00", "13 80 01 00", "0b 80 00 03 08 00 00 fb 03 00 02", "11 80 00 0a 07 00", "02 80 00 01 03 00",
    ]

    static func board(_ responses: [String], modelNumber: String) -> BoardInfo {
        var info = BoardInfo(modelNumber: modelNumber)
        for response in responses {
            let (id, module) = try! ModuleInfo.parse(hex(response))
            info.record(id, module)
        }
        return info
    }
}
