import XCTest

@testable import MetaWear

final class LEDTests: XCTestCase {
    func testBlinkRevisionZeroRepeatTen() {
        XCTAssertBytes(
            LED.writePattern(.blink(repeatCount: 10), color: .green, moduleRevision: 0),
            "02 03 00 02 1f 00 00 00 32 00 00 00 f4 01 00 00 0a")
    }

    func testDelayForcedToZeroBeforeRevisionOne() {
        XCTAssertBytes(
            LED.writePattern(.blink(repeatCount: 10, delay: 5000), color: .green, moduleRevision: 0),
            "02 03 00 02 1f 00 00 00 32 00 00 00 f4 01 00 00 0a")
        XCTAssertBytes(
            LED.writePattern(.blink(repeatCount: 10, delay: 5000), color: .green, moduleRevision: 1),
            "02 03 00 02 1f 00 00 00 32 00 00 00 f4 01 88 13 0a")
    }

    func testConnectedIndicator() {
        XCTAssertBytes(
            LED.connectedIndicator(moduleRevision: 1),
            ["02 03 00 02 1f 00 00 00 32 00 00 00 f4 01 00 00 03", "02 01 01"])
        XCTAssertBytes(LED.stopAndClear(), "02 02 01")
    }

    func testPresetsAndControls() {
        XCTAssertBytes(
            LED.writePattern(.pulse(repeatCount: 1), color: .red, moduleRevision: 1),
            "02 03 01 02 1f 00 d5 02 f4 01 d5 02 d0 07 00 00 01")
        XCTAssertBytes(
            LED.writePattern(.solid(repeatCount: LED.repeatIndefinitely), color: .blue, moduleRevision: 1),
            "02 03 02 02 1f 1f 00 00 f4 01 00 00 e8 03 00 00 ff")
        XCTAssertBytes(LED.play(), "02 01 01")
        XCTAssertBytes(LED.autoplay(), "02 01 02")
        XCTAssertBytes(LED.pause(), "02 01 00")
        XCTAssertBytes(LED.stop(), "02 02 00")
        XCTAssertEqual(LED.writePattern(.blink(), color: .green, moduleRevision: 0).bytes.count, 17)
    }
}
