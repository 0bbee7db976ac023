import XCTest

@testable import MetaWear

final class ModuleInfoTests: XCTestCase {
    func testModuleInfoParsing() throws {
        let (id, info) = try ModuleInfo.parse(hex("0b 80 00 03 08 00 00 fb 03 00 02"))
        XCTAssertEqual(id, .logging)
        XCTAssertEqual(info?.implementation, 0)
        XCTAssertEqual(info?.revision, 3)
        XCTAssertEqual(info?.extra, hex("08 00 00 fb 03 00 02"))
        let (absentID, absent) = try ModuleInfo.parse(hex("16 80"))
        XCTAssertEqual(absentID, .humidity)
        XCTAssertNil(absent)
        XCTAssertThrowsError(try ModuleInfo.parse([0x16]))
        XCTAssertEqual(try MetaWearPacketParser().parse(hex("16 80")), .moduleInfo(.humidity, nil))
    }
}
