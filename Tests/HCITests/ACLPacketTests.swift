import BluetoothWire
import HCI
import WireTestSupport
import XCTest

final class ACLPacketTests: XCTestCase {
    // Handle 0x040, PB 0b10 (first, flushable), a Handle Value Notification on CID 0x0004.
    let vector = "40 20 09 00 05 00 04 00 1b 12 00 aa bb"

    func testDecodesHeaderFlagsAndData() throws {
        let packet = try ACLPacket(decoding: hex(vector))
        XCTAssertEqual(packet.handle, 0x40)
        XCTAssertEqual(packet.packetBoundary, .firstFlushable)
        XCTAssertEqual(packet.broadcast, 0)
        XCTAssertEqual(Array(packet.data), hex("05 00 04 00 1b 12 00 aa bb"))
        XCTAssertEqual(packet.encode(), hex(vector))
        XCTAssertEqual(packet.h4Bytes(), [0x02] + hex(vector))
    }

    func testEveryTruncationAndExtensionIsRejected() {
        assertEveryTruncationThrows(hex(vector)) { _ = try ACLPacket(decoding: $0) }
        XCTAssertThrowsError(try ACLPacket(decoding: hex(vector) + [0])) { error in
            XCTAssertEqual(error as? WireError, .lengthMismatch(field: "ACL Data_Total_Length", declared: 9, actual: 10))
        }
    }

    func testFlagsRoundTrip() throws {
        let packet = ACLPacket(handle: 0xEFF, packetBoundary: .continuing, broadcast: 1, data: [1, 2])
        XCTAssertEqual(packet.encode(), hex("ff 5e 02 00 01 02"))
        XCTAssertEqual(try ACLPacket(decoding: packet.encode()), packet)
        XCTAssertFalse(ACLPacket.PacketBoundary.continuing.isStart)
        XCTAssertTrue(ACLPacket.PacketBoundary.firstNonFlushable.isStart)
    }
}
