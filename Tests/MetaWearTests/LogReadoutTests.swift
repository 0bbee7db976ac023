import XCTest

@testable import MetaWear

/// Loggers, the download's commands, readout entries and their reassembly (protocol reference, 9.2-9.5).
final class LogReadoutTests: XCTestCase {
    func testGyroLoggersAndDownloadCommands() {
        let triggers = Logging.Trigger.threeAxis(module: .gyro, dataRegister: 0x05)
        XCTAssertBytes(triggers.map(Logging.createLogger), ["0b 02 13 05 ff 60", "0b 02 13 05 ff 24"])
        XCTAssertBytes(Logging.createLogger(Logging.Trigger.threeAxis(module: .gyro, dataRegister: 0x04)[0]), "0b 02 13 04 ff 60")
        XCTAssertBytes(Logging.readLogger(slot: 3), "0b 82 03")
        XCTAssertBytes(Logging.enableReadoutNotifications(moduleRevision: 2), ["0b 08 01", "0b 0d 01", "0b 07 01"])
        XCTAssertBytes(Logging.enableReadoutNotifications(moduleRevision: 3), ["0b 08 01", "0b 07 01"])
        XCTAssertBytes(Logging.readout(count: 414, progressEvery: 20), "0b 06 9e 01 00 00 14 00 00 00")
        XCTAssertBytes(Logging.confirmPage(), "0b 0e")
        XCTAssertBytes(Logging.removeEntries(count: 0x0102, moduleRevision: 2), ["0b 0d 01", "0b 09 02 01 00 00"])
        XCTAssertBytes(Logging.removeEntries(count: 7, moduleRevision: 3), ["0b 09 07 00 00 00"])
    }

    func testTriggerReadAnswers() {
        XCTAssertEqual(Logging.Trigger(readAnswer: hex("0b 82 13 05 ff 60")[...]), Logging.Trigger(module: 0x13, register: 0x05, offset: 0, length: 4))
        XCTAssertEqual(Logging.Trigger(readAnswer: hex("0b 82 13 05 ff 24")[...]), Logging.Trigger(module: 0x13, register: 0x05, offset: 4, length: 2))
        XCTAssertNil(Logging.Trigger(readAnswer: hex("0b 82")[...]), "an empty slot")
        XCTAssertNil(Logging.Trigger(readAnswer: hex("0b 82 13 05")[...]))
    }

    func testEntriesParse() {
        XCTAssertEqual(Logging.Entry.parse(hex("0b 07 a1 cc 4d 00 00 6c 01 00 00")[...]),
                       [Logging.Entry(id: 1, resetUID: 5, tick: 0x4DCC, data: 0x16C)])
        XCTAssertEqual(Logging.Entry.parse(hex("0b 07 a0 00 00 01 00 3e 43 ff 7f a1 00 00 01 00 00 80 00 00")[...])?.count, 2)
        XCTAssertNil(Logging.Entry.parse(hex("0b 07 a1 cc 4d 00 00 6c 01 00")[...]), "a truncated entry")
        XCTAssertNil(Logging.Entry.parse(hex("0b 07")[...]))
    }

    func testThreeAxisSamplesComeBackFromEitherOrder() {
        // The SDK's example at ±1000 dps: (524.817, 998.994, −999.024), tick 0x10000.
        var reassembler = LogReassembler(firstID: 0, secondID: 1)
        var out: [LogReassembler.Sample] = []
        reassembler.take(Logging.Entry.parse(hex("0b 07 a0 00 00 01 00 3e 43 ff 7f a1 00 00 01 00 00 80 00 00")[...])!, into: &out)
        XCTAssertEqual(out, [.init(resetUID: 5, tick: 0x10000, triple: RawTriple(x: 0x433E, y: 0x7FFF, z: -0x8000))])
        // Split across notifications, the second id first.
        out = []
        reassembler.take([Logging.Entry(id: 1, resetUID: 2, tick: 10, data: 0xFFFE)], into: &out)
        XCTAssertEqual(out, [])
        XCTAssertEqual(reassembler.unpaired, 1)
        reassembler.take([Logging.Entry(id: 0, resetUID: 2, tick: 10, data: 0x0002_0001), Logging.Entry(id: 7, resetUID: 2, tick: 10, data: 0)], into: &out)
        XCTAssertEqual(out, [.init(resetUID: 2, tick: 10, triple: RawTriple(x: 1, y: 2, z: -2))])
        XCTAssertEqual(reassembler.ignoredEntries, 1, "an entry of another logger")
    }

    func testASliceWithoutItsPartnerIsDropped() {
        // The oldest sample lost its x/y slice (overwritten): its z must not pair with the next x/y.
        var reassembler = LogReassembler(firstID: 0, secondID: 1)
        var out: [LogReassembler.Sample] = []
        reassembler.take([Logging.Entry(id: 1, resetUID: 0, tick: 100, data: 9),
                          Logging.Entry(id: 0, resetUID: 0, tick: 107, data: 0x0001_0001), Logging.Entry(id: 1, resetUID: 0, tick: 107, data: 1)],
                         into: &out)
        XCTAssertEqual(out.map(\.tick), [107])
        XCTAssertEqual(out.first?.triple, RawTriple(x: 1, y: 1, z: 1))
        XCTAssertEqual(reassembler.ignoredEntries, 1)
    }
}
