import XCTest

@testable import MetaWear

final class SampleDecoderTests: XCTestCase {
    func testScalesAndFloat() {
        let raw = RawTriple(x: 17214, y: 32767, z: -32768)
        let decoder = SampleDecoder(gyroRange: .dps500)
        XCTAssertTriple(decoder.scale(raw), 262.409, 499.497, -499.512)
        let float = decoder.scaleFloat(raw)
        XCTAssertEqual(float.x, 262.409, accuracy: 0.001)
        XCTAssertEqual(float.z, -499.512, accuracy: 0.001)
        XCTAssertEqual(
            SampleDecoder(gyroRange: .dps2000).scale(RawTriple(x: 164, y: 0, z: -164)).x, 10, accuracy: 1e-12)
        XCTAssertEqual(SampleDecoder(accelerometerRange: .g2).scale(RawTriple(x: 16384, y: 0, z: 0)).x, 1)
    }

    func testDecodePackedWithTiming() throws {
        let parser = MetaWearPacketParser(gyroRegisters: .bmi160)
        guard
            case .gyroPacked(let samples) = try parser.parse(
                hex("13 07 09 15 ad 26 08 de 8a 1a 0d 26 65 e4 8d 20 ac 27 73 ec"))
        else { return XCTFail() }
        var output: [TimestampedSample] = []
        let timing = SampleClock.Timing(firstIndex: 30, firstTime: 2.0, period: 0.01, count: 3)
        SampleDecoder(gyroRange: .dps1000).decode(samples, timing: timing, into: &output)
        XCTAssertEqual(output.map(\.index), [30, 31, 32])
        XCTAssertEqual(output.map(\.time), [2.0, 2.01, 2.02])
        XCTAssertEqual(output[0].x, 164.177, accuracy: 0.0005)
        XCTAssertEqual(output[2].z, -152.591, accuracy: 0.0005)
    }

}
