import XCTest

@testable import MetaWear

final class ModuleDiscoveryTests: XCTestCase {
    func testSDK030RequestSequence() {
        let discovery = ModuleDiscovery()
        XCTAssertEqual(
            discovery.requests.map(\.description),
            [
                "01 80", "02 80", "03 80", "04 80", "05 80", "07 80", "08 80", "09 80", "0a 80", "0b 80", "0c 80",
                "0d 80",
                "0f 80", "11 80", "12 80", "13 80", "14 80", "15 80", "16 80", "19 80", "fe 80",
            ])
        XCTAssertEqual(ModuleDiscovery.sdk021ModuleIDs.count, 25)
        XCTAssertEqual(
            Set(ModuleDiscovery.sdk021ModuleIDs).subtracting(ModuleDiscovery.sdk030ModuleIDs),
            [.neoPixel, .conductance, .color, .proximity])
    }

    func testMetaMotionRDiscovery() throws {
        var discovery = ModuleDiscovery()
        let answers: [MetaWearModuleID: String] = Dictionary(
            uniqueKeysWithValues: Fixtures.metaMotionR.map { (MetaWearModuleID(hex($0)[0]), $0) })
        var sent: [MetaWearCommand] = []
        while let request = discovery.nextRequest {
            sent.append(request)
            let answer = answers[request.module].map(hex) ?? [request.module.rawValue, 0x80]
            XCTAssertEqual(try discovery.handle(answer), .recorded(request.module))
        }
        XCTAssertEqual(sent.count, 21)
        XCTAssertTrue(discovery.isComplete)
        var info = discovery.boardInfo
        info.modelNumber = "5"
        XCTAssertEqual(info.model, .metaMotionR)
        XCTAssertEqual(info.gyroChip, .bmi160)
        XCTAssertEqual(info.accelerometerChip, .bmi160)
        XCTAssertEqual(info.gyroRegisters, Gyro.RegisterMap(chip: .bmi160, revision: 1))
        XCTAssertEqual(info.gyroRegisters?.packedData, 0x07)
        XCTAssertEqual(info.accelerometerRegisters?.packedData, 0x1c)
        XCTAssertEqual(
            info[.logging], ModuleInfo(id: .logging, implementation: 0, revision: 2, extra: hex("08 80 2b 00 00")))
        XCTAssertEqual(info.loggerSlotCount, 8)
        XCTAssertEqual(info[.settings]?.revision, 3)
        XCTAssertEqual(info.ledRevision, 0)
        XCTAssertTrue(info.absentModules.contains(.humidity))
        XCTAssertFalse(info.isPresent(.humidity))
        XCTAssertTrue(info.isPresent(.ambientLight))
    }

    func testMetaMotionSDiscovery() {
        let info = Fixtures.board(Fixtures.metaMotionS, modelNumber: "8")
        XCTAssertEqual(info.model, .metaMotionS)
        XCTAssertEqual(info.gyroChip, .bmi270)
        XCTAssertEqual(info.accelerometerChip, .bmi270)
        XCTAssertEqual(info.gyroRegisters?.data, 0x04)
        XCTAssertEqual(info.gyroRegisters?.packedData, 0x05)
        XCTAssertEqual(info.accelerometerRegisters?.packedData, 0x05)
        XCTAssertEqual(info[.logging]?.revision, 3)
        XCTAssertEqual(info.loggerSlotCount, 8)
        XCTAssertEqual(
            info[.settings], ModuleInfo(id: .settings, implementation: 0, revision: 10, extra: [0x07, 0x00]))
        XCTAssertEqual(info.ledRevision, 1)
    }

    func testResumeSkipsKnownModules() throws {
        var partial = BoardInfo()
        partial.record(.switch, ModuleInfo(id: .switch, implementation: 0, revision: 0))
        partial.record(.led, nil)
        let discovery = ModuleDiscovery(boardInfo: partial)
        XCTAssertEqual(discovery.nextRequest?.bytes, hex("03 80"))
        XCTAssertEqual(discovery.pending.count, 19)
    }

    func testUnexpectedAnswerDoesNotAdvance() throws {
        var discovery = ModuleDiscovery()
        XCTAssertEqual(try discovery.handle(hex("13 80 00 01")), .unexpected(.gyro))
        XCTAssertEqual(discovery.nextRequest?.bytes, hex("01 80"))
        XCTAssertFalse(discovery.pending.contains(.gyro))
        XCTAssertThrowsError(try discovery.handle(hex("13 81 00 01")))
        XCTAssertThrowsError(try discovery.handle(hex("13 80 00")))
    }

}
