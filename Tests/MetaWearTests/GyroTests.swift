import XCTest

@testable import MetaWear

final class GyroTests: XCTestCase {
    func testConfigureEveryRateAndRange() {
        let confBytes: [Gyro.OutputDataRate: UInt8] = [
            .hz25: 0x26, .hz50: 0x27, .hz100: 0x28, .hz200: 0x29, .hz400: 0x2a, .hz800: 0x2b, .hz1600: 0x2c,
            .hz3200: 0x2d,
        ]
        let hertz: [Gyro.OutputDataRate: Double] = [
            .hz25: 25, .hz50: 50, .hz100: 100, .hz200: 200, .hz400: 400, .hz800: 800, .hz1600: 1600, .hz3200: 3200,
        ]
        let rangeCodes: [Gyro.Range: UInt8] = [.dps2000: 0, .dps1000: 1, .dps500: 2, .dps250: 3, .dps125: 4]
        var count = 0
        for odr in Gyro.OutputDataRate.allCases {
            XCTAssertEqual(odr.hertz, hertz[odr])
            for range in Gyro.Range.allCases {
                let command = Gyro.configure(.init(outputDataRate: odr, range: range))
                XCTAssertEqual(command.bytes, [0x13, 0x03, confBytes[odr]!, rangeCodes[range]!])
                count += 1
            }
        }
        XCTAssertEqual(count, 40)
        XCTAssertBytes(Gyro.configure(.sdkDefault), "13 03 28 00")
    }

    func testRangeScales() {
        XCTAssertEqual(Gyro.Range.allCases.map(\.lsbPerDegreePerSecond), [16.4, 32.8, 65.6, 131.2, 262.4])
        XCTAssertEqual(Gyro.Range.allCases.map(\.degreesPerSecond), [2000, 1000, 500, 250, 125])
    }

    func testBMI160StartStop() throws {
        let map = Gyro.RegisterMap(chip: .bmi160, revision: 1)
        XCTAssertBytes(try Gyro.startStreaming(map), ["13 05 01", "13 02 01 00", "13 01 01"])
        XCTAssertBytes(try Gyro.stopStreaming(map), ["13 01 00", "13 02 00 01", "13 05 00"])
        XCTAssertBytes(try Gyro.startStreaming(map, packed: true), ["13 07 01", "13 02 01 00", "13 01 01"])
        XCTAssertBytes(try Gyro.stopStreaming(map, packed: true), ["13 01 00", "13 02 00 01", "13 07 00"])
    }

    func testBMI270StartStop() throws {
        let map = Gyro.RegisterMap(chip: .bmi270, revision: 0)
        XCTAssertBytes(try Gyro.startStreaming(map), ["13 04 01", "13 02 01 00", "13 01 01"])
        XCTAssertBytes(try Gyro.stopStreaming(map), ["13 01 00", "13 02 00 01", "13 04 00"])
        XCTAssertBytes(try Gyro.startStreaming(map, packed: true), ["13 05 01", "13 02 01 00", "13 01 01"])
        XCTAssertEqual(map.offset, 0x06)
    }

    func testBMI160RevisionZeroHasNoPackedRegister() {
        let map = Gyro.RegisterMap(chip: .bmi160, revision: 0)
        XCTAssertNil(map.packedData)
        XCTAssertThrowsError(try Gyro.startStreaming(map, packed: true)) { error in
            XCTAssertEqual(
                error as? MetaWearCommandError, .packedDataUnsupported(module: .gyro, chip: .bmi160, revision: 0))
        }
    }

    func testReadConfiguration() throws {
        XCTAssertBytes(Gyro.readConfiguration(), "13 83")
        let packet = try MetaWearPacketParser().parse(hex("13 83 28 00"))
        XCTAssertEqual(packet, .gyroConfig(.init(outputDataRate: .hz100, range: .dps2000)))
        XCTAssertEqual(
            try MetaWearPacketParser().parse(hex("13 83 2b 01")),
            .gyroConfig(.init(outputDataRate: .hz800, range: .dps1000)))
        XCTAssertThrowsError(try MetaWearPacketParser().parse(hex("13 83 25 00")))
        XCTAssertThrowsError(try MetaWearPacketParser().parse(hex("13 83 28 07")))
    }

    func testUnpackedExample() throws {
        let parser = MetaWearPacketParser(gyroRegisters: .bmi160)
        guard case .gyroData(let samples) = try parser.parse(hex("13 05 3e 43 ff 7f 00 80")) else {
            return XCTFail("not gyro data")
        }
        XCTAssertEqual(Array(samples), [RawTriple(x: 17214, y: 32767, z: -32768)])
        XCTAssertTriple(SampleDecoder(gyroRange: .dps500).scale(samples[0]), 262.409, 499.497, -499.512)
    }

    func testPackedExample() throws {
        let parser = MetaWearPacketParser(gyroRegisters: .bmi160)
        let bytes = hex("13 07 09 15 ad 26 08 de 8a 1a 0d 26 65 e4 8d 20 ac 27 73 ec")
        guard case .gyroPacked(let samples) = try parser.parse(bytes) else { return XCTFail("not packed") }
        XCTAssertEqual(samples.count, 3)
        let decoder = SampleDecoder(gyroRange: .dps1000)
        XCTAssertTriple(decoder.scale(samples[0]), 164.177, 301.860, -265.122)
        XCTAssertTriple(decoder.scale(samples[1]), 207.134, 296.982, -215.457)
        XCTAssertTriple(decoder.scale(samples[2]), 254.055, 309.634, -152.591)
    }

    func testBMI270DataRegisters() throws {
        let parser = MetaWearPacketParser(gyroRegisters: .bmi270)
        XCTAssertEqual(
            try parser.parse(hex("13 04 3e 43 ff 7f 00 80")),
            .gyroData(RawTriples(RawTriple(x: 17214, y: 32767, z: -32768))))
        // On BMI270, 0x05 is the packed register: an 8-byte packet there is malformed.
        XCTAssertThrowsError(try parser.parse(hex("13 05 3e 43 ff 7f 00 80"))) { error in
            XCTAssertEqual(
                error as? MetaWearPacketError, .unexpectedLength(module: 0x13, register: 0x05, expected: 20, actual: 8))
        }
        guard case .gyroPacked = try parser.parse(hex("13 05 09 15 ad 26 08 de 8a 1a 0d 26 65 e4 8d 20 ac 27 73 ec"))
        else { return XCTFail("not packed") }
    }
}
