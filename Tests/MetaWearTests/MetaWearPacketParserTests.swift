import XCTest

@testable import MetaWear
import SupportCore

final class MetaWearPacketParserTests: XCTestCase {
    static let bmi160 = MetaWearPacketParser(gyroRegisters: .bmi160, accelerometerRegisters: .bmi160)
    static let bmi270 = MetaWearPacketParser(gyroRegisters: .bmi270, accelerometerRegisters: .bmi270)

    /// Valid packets with fixed layouts, for the BMI160 parser.
    static let fixedLayoutPackets = [
        "13 05 3e 43 ff 7f 00 80", "13 07 09 15 ad 26 08 de 8a 1a 0d 26 65 e4 8d 20 ac 27 73 ec", "13 83 28 00",
        "03 04 16 c4 94 a2 2a d0", "03 83 28 03", "11 8c 63 34 10", "11 8b 01 07 7b 52 8f c9 e8", "01 01 01",
        "0b 84 15 04 00 00 05", "0b 85 9e 01 00 00", "0b 02 00", "09 02 00", "0a 02 00",
    ]

    func testUnknownHeadersAreKept() throws {
        XCTAssertEqual(
            try Self.bmi160.parse(hex("42 07 01 02")),
            .unknown(module: MetaWearModuleID(0x42), register: 0x07, bytes: hex("42 07 01 02")))
        // The log readout stream is not decoded here; it survives as unknown.
        XCTAssertEqual(
            try Self.bmi160.parse(hex("0b 07 a1 cc 4d 00 00 6c 01 00 00")),
            .unknown(module: .logging, register: 0x07, bytes: hex("0b 07 a1 cc 4d 00 00 6c 01 00 00")))
        // Without register maps, gyro data cannot be routed.
        guard case .unknown = try MetaWearPacketParser().parse(hex("13 05 3e 43 ff 7f 00 80")) else {
            return XCTFail("expected unknown")
        }
        // BMI160 gyro rev 0 has no packed register.
        let rev0 = MetaWearPacketParser(gyroRegisters: .init(chip: .bmi160, revision: 0))
        guard case .unknown = try rev0.parse(hex("13 07 09 15 ad 26 08 de 8a 1a 0d 26 65 e4 8d 20 ac 27 73 ec")) else {
            return XCTFail("expected unknown")
        }
    }

    func testEmptyAndOneByteNotifications() {
        for bytes in [[], [0x13]] as [[UInt8]] {
            XCTAssertThrowsError(try Self.bmi160.parse(bytes)) { error in
                XCTAssertEqual(error as? MetaWearPacketError, .tooShort(length: bytes.count))
            }
        }
    }

    func testEveryTruncationOrExtensionOfAFixedLayoutThrows() {
        for packet in Self.fixedLayoutPackets.map(hex) {
            XCTAssertNoThrow(try Self.bmi160.parse(packet), "\(packet)")
            for length in 2..<packet.count {
                XCTAssertThrowsError(try Self.bmi160.parse(Array(packet.prefix(length))), "\(packet.prefix(length))") {
                    error in
                    guard case .unexpectedLength(_, _, let expected, let actual) = error as? MetaWearPacketError else {
                        return XCTFail("\(error)")
                    }
                    XCTAssertEqual(expected, packet.count)
                    XCTAssertEqual(actual, length)
                }
            }
            XCTAssertThrowsError(try Self.bmi160.parse(packet + [0x00]))
        }
    }

    /// Random and mutated notifications never trap: each one parses or throws a packet error.
    func testRandomizedInputNeverTraps() {
        var rng = SplitMix64(seed: 0x6D65_7461_7765_6172)
        let parsers = [Self.bmi160, Self.bmi270, MetaWearPacketParser()]
        let modules: [UInt8] = [0x01, 0x02, 0x03, 0x09, 0x0a, 0x0b, 0x11, 0x13, 0x14, 0xfe]
        let registers: [UInt8] = [0x01, 0x02, 0x04, 0x05, 0x07, 0x1c, 0x80, 0x83, 0x84, 0x85, 0x8b, 0x8c, 0xc0, 0xcc]
        let seeds = Self.fixedLayoutPackets.map(hex)
        var parsed = 0
        var failed = 0
        for case_ in 0..<20_000 {
            var bytes: [UInt8]
            switch case_ % 3 {
            case 0:  // pure noise
                bytes = (0..<Int.random(in: 0...24, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            case 1:  // plausible header, random body
                bytes = [modules.randomElement(using: &rng)!, registers.randomElement(using: &rng)!]
                bytes += (0..<Int.random(in: 0...22, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            default:  // a valid packet, truncated or extended and with a flipped byte
                bytes = seeds.randomElement(using: &rng)!
                bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count + 2, using: &rng)))
                if Bool.random(using: &rng) { bytes.append(UInt8.random(in: 0...255, using: &rng)) }
                if bytes.count > 2 { bytes[Int.random(in: 2..<bytes.count, using: &rng)] ^= 0xFF }
            }
            for parser in parsers {
                do {
                    _ = try parser.parse(bytes)
                    parsed += 1
                } catch {
                    failed += 1
                    XCTAssertFalse(error.description.isEmpty)
                }
            }
        }
        XCTAssertEqual(parsed + failed, 60_000)
        XCTAssertGreaterThan(parsed, 1000)
        XCTAssertGreaterThan(failed, 1000)
    }
}
