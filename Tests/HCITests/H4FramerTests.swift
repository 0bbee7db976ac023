import BluetoothWire
import HCI
import WireTestSupport
import XCTest

final class H4FramerTests: XCTestCase {
    // Command Complete (Reset), an ACL notification, a command, a Command Status.
    let stream = hex("04 0e 04 01 03 0c 00") + hex("02 40 20 09 00 05 00 04 00 1b 12 00 aa bb")
        + hex("01 03 0c 00") + hex("04 0f 04 00 01 0d 20")

    func drain(_ framer: inout H4Framer) -> [H4Packet] {
        var packets: [H4Packet] = []
        while let packet = framer.nextPacket() { packets.append(packet) }
        return packets
    }

    func testFramesAWholeStream() {
        var framer = H4Framer()
        framer.append(stream)
        let packets = drain(&framer)
        XCTAssertEqual(packets.map(\.type), [.event, .aclData, .command, .event])
        XCTAssertEqual(Array(packets[0].bytes), hex("0e 04 01 03 0c 00"))
        XCTAssertEqual(packets.flatMap(\.h4Bytes), stream)
        XCTAssertEqual(framer.bufferedByteCount, 0)
    }

    func testDripFedByteByByteGivesTheSamePackets() {
        var whole = H4Framer()
        whole.append(stream)
        let expected = drain(&whole)
        var framer = H4Framer()
        var packets: [H4Packet] = []
        for byte in stream {
            framer.append([byte])
            packets += drain(&framer)
        }
        XCTAssertEqual(packets, expected)
        XCTAssertEqual(framer.discardedByteCount, 0)
    }

    func testArbitrarySplitsGiveTheSamePackets() {
        for split in 0...stream.count {
            var framer = H4Framer()
            framer.append(stream[..<split])
            var packets = drain(&framer)
            framer.append(stream[split...])
            packets += drain(&framer)
            XCTAssertEqual(packets.flatMap(\.h4Bytes), stream, "split at \(split)")
        }
    }

    func testUnknownPacketTypeIsCountedAndSkipped() {
        var framer = H4Framer()
        framer.append([0xFF, 0x00] + hex("04 0e 04 01 03 0c 00") + [0x42])
        let packets = drain(&framer)
        XCTAssertEqual(packets.count, 1)
        XCTAssertEqual(framer.discardedByteCount, 3)
        XCTAssertEqual(framer.packetCount, 1)
    }

    func testIncompletePacketWaits() {
        var framer = H4Framer()
        framer.append(hex("02 40 20 09 00 05 00"))
        XCTAssertNil(framer.nextPacket())
        XCTAssertEqual(framer.bufferedByteCount, 7)
    }

    func testISOLengthUsesFourteenBits() {
        var framer = H4Framer()
        framer.append(hex("05 01 00 02 c0 aa bb"))
        XCTAssertEqual(framer.nextPacket()?.bytes.count, 6)
    }

    func testLargeStreamCompactsWithoutLosingPackets() {
        let packet = hex("04 0e 04 01 03 0c 00")
        var framer = H4Framer()
        var count = 0
        for _ in 0..<2000 {
            framer.append(packet + packet.prefix(3))
            framer.append(packet.dropFirst(3))
            count += drain(&framer).count
        }
        XCTAssertEqual(count, 4000)
    }

    func testFramedSlicesDecodeDespiteNonZeroIndices() throws {
        var framer = H4Framer()
        framer.append(stream)
        let packets = drain(&framer)
        XCTAssertGreaterThan(packets[1].bytes.startIndex, 0)
        XCTAssertEqual(try HCIEvent(decoding: packets[0].bytes).code, .commandComplete)
        let acl = try ACLPacket(decoding: packets[1].bytes)
        XCTAssertEqual(acl.handle, 0x40)
        XCTAssertEqual(Array(acl.data), hex("05 00 04 00 1b 12 00 aa bb"))
        XCTAssertEqual(try ResetCommand(decoding: packets[2].bytes), ResetCommand())
        XCTAssertEqual(try HCIEvent(decoding: packets[3].bytes).code, .commandStatus)
    }
}
