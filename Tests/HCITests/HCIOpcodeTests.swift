import HCI
import XCTest

final class HCIOpcodeTests: XCTestCase {
    func testPacksOGFAndOCF() {
        XCTAssertEqual(HCIOpcode.reset.rawValue, 0x0C03)
        XCTAssertEqual(HCIOpcode.leCreateConnection.rawValue, 0x200D)
        XCTAssertEqual(HCIOpcode.disconnect.rawValue, 0x0406)
        XCTAssertEqual(HCIOpcode.writeLEHostSupport.rawValue, 0x0C6D)
        XCTAssertEqual(HCIOpcode.readBDADDR.rawValue, 0x1009)
        let opcode = HCIOpcode(rawValue: 0x2021)
        XCTAssertEqual(opcode.ogf, 0x08)
        XCTAssertEqual(opcode.ocf, 0x0021)
        XCTAssertEqual(opcode, .leRemoteConnectionParameterRequestNegativeReply)
    }

    func testUnknownOpcodeDescribesItself() {
        XCTAssertTrue(HCIOpcode(rawValue: 0xFC01).description.contains("0xfc01"))
        XCTAssertTrue(HCIOpcode.reset.description.hasPrefix("reset"))
    }

    func testStatusIsOpenWithNames() {
        XCTAssertTrue(HCIStatus(rawValue: 0x13).description.hasPrefix("remoteUserTerminatedConnection"))
        XCTAssertEqual(HCIStatus(rawValue: 0x99).description, "status (0x99)")
        XCTAssertTrue(HCIStatus.success.isSuccess)
    }
}
