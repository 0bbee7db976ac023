import XCTest

@testable import MetaWear

final class MetaWearUUIDsTests: XCTestCase {
    func testUUIDs() {
        XCTAssertEqual(MetaWearUUIDs.service, "326a9000-85cb-9195-d9dd-464cfbbae75a")
        XCTAssertEqual(MetaWearUUIDs.command, "326a9001-85cb-9195-d9dd-464cfbbae75a")
        XCTAssertEqual(MetaWearUUIDs.notify, "326a9006-85cb-9195-d9dd-464cfbbae75a")
        XCTAssertEqual(MetaWearUUIDs.commandBytes, hex("32 6a 90 01 85 cb 91 95 d9 dd 46 4c fb ba e7 5a"))
        XCTAssertEqual(MetaWearUUIDs.notifyBytes.count, 16)
        XCTAssertEqual(MetaWearUUIDs.serviceBytes[3], 0x00)
        XCTAssertEqual(MetaWearUUIDs.deviceInformationReadOrder.first, MetaWearUUIDs.firmwareRevision)
        XCTAssertEqual(MetaWearUUIDs.bytes(of: MetaWearUUIDs.modelNumber)?[3], 0x24)
        XCTAssertNil(MetaWearUUIDs.bytes(of: "326a9001"))
        XCTAssertNil(MetaWearUUIDs.bytes(of: "zz6a9001-85cb-9195-d9dd-464cfbbae75a"))
    }
}
