import XCTest

@testable import MetaWear

final class LoggingTests: XCTestCase {
    func testTimeReadAndResponse() throws {
        XCTAssertBytes(Logging.readTime(), "0b 84")
        let packet = try MetaWearPacketParser().parse(hex("0b 84 15 04 00 00 05"))
        XCTAssertEqual(packet, .logTime(.init(tick: 1045, resetUID: 5)))
        guard case .logTime(let time) = packet else { return XCTFail() }
        XCTAssertEqual(time.millisecondsSinceReset, 1531)
        XCTAssertEqual(time.referenceEpochMilliseconds(hostNowMilliseconds: 10_000), 8469)
        XCTAssertThrowsError(try MetaWearPacketParser().parse(hex("0b 84 15 04 00 00")))
    }

    func testTickDeltas() {
        // Ticks 0x42e6, 0x42f4, 0x430f, 0x431c → deltas 20, 40, 19 ms.
        let ms = [0x42e6, 0x42f4, 0x430f, 0x431c].map { Logging.Time(tick: $0, resetUID: 0).millisecondsSinceReset }
        XCTAssertEqual(zip(ms.dropFirst(), ms).map { $0 - $1 }, [20, 40, 19])
    }

    func testTearDownCommands() {
        XCTAssertBytes(Logging.stop(), "0b 01 00")
        XCTAssertBytes(Logging.removeAllLoggers(), "0b 0a")
        XCTAssertBytes(Logging.start(overwrite: true), ["0b 0b 01", "0b 01 01"])
        XCTAssertBytes(Logging.start(overwrite: false), ["0b 0b 00", "0b 01 01"])
        XCTAssertBytes(Logging.clearEntries(moduleRevision: 2), ["0b 0d 01", "0b 09 ff ff ff ff"])
        XCTAssertBytes(Logging.clearEntries(moduleRevision: 3), ["0b 09 ff ff ff ff"])
        XCTAssertBytes(Logging.readLength(), "0b 85")
        XCTAssertBytes(Logging.flushPage(), "0b 10 01")
        XCTAssertBytes(Logging.resume(), "0b 01 01")
        XCTAssertFalse(Logging.hasPageBuffer(moduleRevision: 2))
        XCTAssertTrue(Logging.hasPageBuffer(moduleRevision: 3))
    }

    func testLengthAndCreatedResponses() throws {
        let parser = MetaWearPacketParser()
        XCTAssertEqual(try parser.parse(hex("0b 85 9e 01 00 00")), .logLength(414))
        XCTAssertEqual(try parser.parse(hex("0b 02 07")), .loggerCreated(id: 7))
    }
}
