import BluetoothWire
import GAP
import WireTestSupport
import XCTest

final class AdvertisingDataTests: XCTestCase {
    func testParsesMetaWearLikeAdvertisement() throws {
        // Flags, complete 128-bit service list (MetaWear), complete name "MetaWear", TX power,
        // manufacturer data for MbientLab (0x067E).
        let bytes = hex("02 01 06") + hex("11 07 5a e7 ba fb 4c 46 dd d9 95 91 cb 85 00 90 6a 32")
            + hex("09 09 4d 65 74 61 57 65 61 72") + hex("02 0a f8") + hex("05 ff 7e 06 01 02")
        let data = AdvertisingData(bytes: bytes)
        XCTAssertEqual(data.issues, [])
        XCTAssertEqual(data.flags, 0x06)
        XCTAssertEqual(data.localName, "MetaWear")
        XCTAssertEqual(data.serviceUUIDs, [try BluetoothUUID(parsing: "326A9000-85CB-9195-D9DD-464CFBBAE75A")])
        XCTAssertTrue(data.hasCompleteServiceUUIDList)
        XCTAssertEqual(data.txPowerLevel, -8)
        XCTAssertEqual(data.manufacturerData, [ManufacturerData(companyIdentifier: 0x067E, data: [1, 2])])
        XCTAssertEqual(AdvertisingData.encode(data.structures), bytes)
    }

    func testSixteenBitListsAndShortenedName() {
        let data = AdvertisingData(bytes: hex("05 02 0d 18 0f 18 03 08 4d 57"))
        XCTAssertEqual(data.serviceUUIDs, [BluetoothUUID(uuid16: 0x180D), BluetoothUUID(uuid16: 0x180F)])
        XCTAssertFalse(data.hasCompleteServiceUUIDList)
        XCTAssertEqual(data.shortenedLocalName, "MW")
        XCTAssertEqual(data.localName, "MW")
    }

    func testZeroLengthEndsTheSignificantPart() {
        let data = AdvertisingData(bytes: hex("02 01 06 00 00 00 ff ff"))
        XCTAssertEqual(data.structures.count, 1)
        XCTAssertEqual(data.issues, [])
    }

    func testTruncatedStructureIsReportedAndEarlierOnesKept() {
        let data = AdvertisingData(bytes: hex("02 01 06 09 09 4d 65"))
        XCTAssertEqual(data.flags, 6)
        XCTAssertEqual(data.issues, [.truncatedStructure(offset: 3, declaredLength: 9, available: 3)])
    }

    func testMalformedFieldsAreReportedNotTrapped() {
        let data = AdvertisingData(bytes: hex("04 03 0d 18 0f") + hex("01 01") + hex("02 ff 7e") + hex("03 0a 01 02"))
        XCTAssertEqual(data.serviceUUIDs, [])
        XCTAssertNil(data.txPowerLevel)
        XCTAssertEqual(data.issues.count, 3 + 1)
        XCTAssertTrue(data.issues[0].description.contains("multiple of 2"), data.issues[0].description)
    }

    func testEveryPrefixParsesWithoutTrapping() {
        let bytes = hex("02 01 06 11 07 5a e7 ba fb 4c 46 dd d9 95 91 cb 85 00 90 6a 32 05 ff 7e 06 01 02")
        for length in 0...bytes.count {
            let data = AdvertisingData(bytes: bytes.prefix(length))
            let kept = AdvertisingData.encode(data.structures)
            XCTAssertEqual(kept, Array(bytes.prefix(kept.count)))
            if data.issues.isEmpty {
                XCTAssertEqual(kept.count, length)
            } else {
                guard case .truncatedStructure(offset: kept.count, _, _) = data.issues[0] else { return XCTFail("\(data.issues)") }
            }
        }
    }
}
