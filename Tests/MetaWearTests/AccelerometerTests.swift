import XCTest

@testable import MetaWear

final class AccelerometerTests: XCTestCase {
    func testBMI160ConfigBytes() {
        let expected: [UInt8] = [0x81, 0x82, 0x83, 0x84, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c]
        XCTAssertEqual(
            Accelerometer.OutputDataRate.allCases.map {
                Accelerometer.Configuration(outputDataRate: $0, range: .g2).confByte(for: .bmi160)
            },
            expected)
        XCTAssertEqual(Accelerometer.Range.allCases.map { $0.rangeByte(for: .bmi160) }, [0x03, 0x05, 0x08, 0x0c])
        XCTAssertBytes(Accelerometer.configure(.init(outputDataRate: .hz100, range: .g4), chip: .bmi160), "03 03 28 05")
        XCTAssertBytes(Accelerometer.configure(.sdkDefault(for: .bmi160), chip: .bmi160), "03 03 28 03")
    }

    func testBMI270ConfigBytes() {
        let expected: [UInt8] = [0x21, 0x22, 0x23, 0x24, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac]
        XCTAssertEqual(
            Accelerometer.OutputDataRate.allCases.map {
                Accelerometer.Configuration(outputDataRate: $0, range: .g2).confByte(for: .bmi270)
            },
            expected)
        XCTAssertEqual(Accelerometer.Range.allCases.map { $0.rangeByte(for: .bmi270) }, [0x00, 0x01, 0x02, 0x03])
        XCTAssertBytes(
            Accelerometer.configure(.init(outputDataRate: .hz100, range: .g16), chip: .bmi270), "03 03 a8 03")
        XCTAssertBytes(Accelerometer.configure(.sdkDefault(for: .bmi270), chip: .bmi270), "03 03 a8 02")
    }

    func testRatesAndRanges() {
        XCTAssertEqual(Accelerometer.OutputDataRate.hz0_78125.hertz, 0.78125)
        XCTAssertEqual(Accelerometer.OutputDataRate.hz1600.hertz, 1600)
        XCTAssertEqual(Accelerometer.OutputDataRate.nearest(to: 55), .hz50)
        XCTAssertEqual(Accelerometer.Range.nearest(to: 14.75), .g16)
        XCTAssertEqual(Accelerometer.Range.allCases.map(\.lsbPerG), [16384, 8192, 4096, 2048])
    }

    func testStartStopSequences() throws {
        let config = Accelerometer.Configuration(outputDataRate: .hz100, range: .g4)
        XCTAssertBytes(
            try Accelerometer.startStreaming(.bmi160, configuration: config), ["03 04 01", "03 02 01 00", "03 01 01"])
        XCTAssertBytes(try Accelerometer.stopStreaming(.bmi160), ["03 01 00", "03 02 00 01", "03 04 00"])
        XCTAssertBytes(
            try Accelerometer.startStreaming(.bmi160, configuration: config, packed: true),
            ["03 1c 01", "03 02 01 00", "03 01 01"])
        XCTAssertBytes(
            try Accelerometer.startStreaming(.bmi270, configuration: config, packed: true),
            ["03 05 01", "03 02 01 00", "03 01 01"])
        XCTAssertThrowsError(
            try Accelerometer.startStreaming(.init(chip: .bmi160, revision: 0), configuration: config, packed: true))
    }

    func testBMI270LowPowerStartQuirk() throws {
        let config = Accelerometer.Configuration(outputDataRate: .hz6_25, range: .g8)
        XCTAssertBytes(Accelerometer.configure(config, chip: .bmi270), "03 03 24 02")
        XCTAssertBytes(Accelerometer.powerOn(.bmi270, configuration: config), "03 01 02")
        XCTAssertBytes(Accelerometer.powerOn(.bmi160, configuration: config), "03 01 01")
    }

    func testDataExample() throws {
        let parser = MetaWearPacketParser(accelerometerRegisters: .bmi160)
        guard case .accData(let samples) = try parser.parse(hex("03 04 16 c4 94 a2 2a d0")) else {
            return XCTFail("not acc data")
        }
        XCTAssertTriple(SampleDecoder(accelerometerRange: .g4).scale(samples[0]), -1.872, -2.919, -1.495)
    }

    func testPackedRegisters() throws {
        let payload = " 16 c4 94 a2 2a d0 16 c4 94 a2 2a d0 16 c4 94 a2 2a d0"
        guard
            case .accPacked(let a) = try MetaWearPacketParser(accelerometerRegisters: .bmi160).parse(
                hex("03 1c" + payload))
        else { return XCTFail("BMI160 packed") }
        guard
            case .accPacked(let b) = try MetaWearPacketParser(accelerometerRegisters: .bmi270).parse(
                hex("03 05" + payload))
        else { return XCTFail("BMI270 packed") }
        XCTAssertEqual(a, b)
        XCTAssertEqual(a.count, 3)
    }

    func testReadConfiguration() throws {
        XCTAssertBytes(Accelerometer.readConfiguration(), "03 83")
        XCTAssertEqual(
            try MetaWearPacketParser(accelerometerRegisters: .bmi160).parse(hex("03 83 28 03")),
            .accConfig(.init(outputDataRate: .hz100, range: .g2)))
        XCTAssertEqual(
            try MetaWearPacketParser(accelerometerRegisters: .bmi270).parse(hex("03 83 a8 02")),
            .accConfig(.init(outputDataRate: .hz100, range: .g8)))
        XCTAssertThrowsError(try MetaWearPacketParser(accelerometerRegisters: .bmi160).parse(hex("03 83 28 02")))
    }
}
