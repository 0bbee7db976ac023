import XCTest

@testable import MetaWear

final class BoardInfoTests: XCTestCase {
    func testRecordPresenceAndAbsence() {
        var info = BoardInfo(firmwareRevision: "1.7.3", modelNumber: "5")
        XCTAssertFalse(info.isKnown(.gyro))
        info.record(.gyro, ModuleInfo(id: .gyro, implementation: 0, revision: 1))
        XCTAssertTrue(info.isPresent(.gyro))
        XCTAssertEqual(info.gyroRegisters, .bmi160)
        info.record(.gyro, nil)
        XCTAssertTrue(info.isKnown(.gyro))
        XCTAssertFalse(info.isPresent(.gyro))
        XCTAssertTrue(info.absentModules.contains(.gyro))
        info.record(.gyro, ModuleInfo(id: .gyro, implementation: 1, revision: 0))
        XCTAssertFalse(info.absentModules.contains(.gyro))
        XCTAssertEqual(info.gyroRegisters, .bmi270)
        XCTAssertEqual(info.presentModules, [.gyro])
    }

    func testParserFromBoardInfo() throws {
        let parser = MetaWearPacketParser(boardInfo: Fixtures.board(Fixtures.metaMotionS, modelNumber: "8"))
        XCTAssertEqual(parser.gyroRegisters, .bmi270)
        XCTAssertEqual(parser.accelerometerRegisters, .bmi270)
        XCTAssertEqual(try parser.parse(hex("03 83 a8 02")), .accConfig(.init(outputDataRate: .hz100, range: .g8)))
    }
}
