import HCI
import XCTest

final class ACLReassemblerTests: XCTestCase {
    /// An L2CAP frame on the ATT channel with a payload of `count` bytes.
    func frame(payload count: Int) -> [UInt8] {
        [UInt8(count & 0xFF), UInt8(count >> 8), 0x04, 0x00] + (0..<count).map { UInt8(truncatingIfNeeded: $0) }
    }

    func testSingleFragmentFrameIsReturnedWhole() {
        var reassembler = ACLReassembler()
        let bytes = frame(payload: 10)
        let output = reassembler.push(ACLPacket(handle: 0x40, packetBoundary: .firstFlushable, data: bytes))
        XCTAssertEqual(output.frame.map(Array.init), bytes)
        XCTAssertNil(output.dropped)
        XCTAssertTrue(reassembler.isIdle)
    }

    func testUnfragmentedPacketLargerThanTheBufferIsAccepted() {
        // bumble's emulator sends 48-byte ACL packets despite advertising 27-byte buffers.
        var reassembler = ACLReassembler()
        let bytes = frame(payload: 44)
        XCTAssertEqual(reassembler.push(ACLPacket(handle: 0x40, packetBoundary: .firstFlushable, data: bytes)).frame.map(Array.init), bytes)
    }

    func testReassemblesTwentySevenByteFragments() {
        let bytes = frame(payload: 247 - 4 + 3)
        var reassembler = ACLReassembler()
        let packets = ACLFragmenter.fragments(of: bytes, handle: 0x40, maximumDataLength: 27)
        XCTAssertGreaterThan(packets.count, 5)
        var frames: [[UInt8]] = []
        for packet in packets {
            let output = reassembler.push(packet)
            XCTAssertNil(output.dropped)
            if let frame = output.frame { frames.append(Array(frame)) }
        }
        XCTAssertEqual(frames, [bytes])
    }

    func testStartFragmentShorterThanTheLengthField() {
        let bytes = frame(payload: 3)
        var reassembler = ACLReassembler()
        XCTAssertNil(reassembler.push(ACLPacket(handle: 1, packetBoundary: .firstFlushable, data: Array(bytes.prefix(1)))).frame)
        XCTAssertNil(reassembler.push(ACLPacket(handle: 1, packetBoundary: .continuing, data: Array(bytes[1..<3]))).frame)
        let output = reassembler.push(ACLPacket(handle: 1, packetBoundary: .continuing, data: Array(bytes[3...])))
        XCTAssertEqual(output.frame.map(Array.init), bytes)
    }

    func testContinuationWithoutStartIsReportedAndDropped() {
        var reassembler = ACLReassembler()
        let output = reassembler.push(ACLPacket(handle: 0x40, packetBoundary: .continuing, data: [1, 2, 3]))
        XCTAssertEqual(output.dropped, .continuationWithoutStart(handle: 0x40, length: 3))
        XCTAssertNil(output.frame)
    }

    func testNewStartDropsThePartialFrameAndStillDeliversTheNewOne() {
        var reassembler = ACLReassembler()
        _ = reassembler.push(ACLPacket(handle: 0x40, packetBoundary: .firstFlushable, data: Array(frame(payload: 40).prefix(27))))
        let whole = frame(payload: 5)
        let output = reassembler.push(ACLPacket(handle: 0x40, packetBoundary: .firstFlushable, data: whole))
        XCTAssertEqual(output.dropped, .interruptedFrame(handle: 0x40, received: 27, expected: 44))
        XCTAssertEqual(output.frame.map(Array.init), whole)
    }

    func testOverflowResets() {
        var reassembler = ACLReassembler()
        let bytes = frame(payload: 30)
        _ = reassembler.push(ACLPacket(handle: 2, packetBoundary: .firstFlushable, data: Array(bytes.prefix(27))))
        let output = reassembler.push(ACLPacket(handle: 2, packetBoundary: .continuing, data: Array(bytes[27...]) + [0xFF]))
        XCTAssertEqual(output.dropped, .overflow(handle: 2, received: 35, expected: 34))
        XCTAssertTrue(reassembler.isIdle)
        let tooLongStart = reassembler.push(ACLPacket(handle: 2, packetBoundary: .firstFlushable, data: frame(payload: 2) + [9]))
        XCTAssertEqual(tooLongStart.dropped, .overflow(handle: 2, received: 7, expected: 6))
    }

    func testFrameOverTheLimitIsDroppedWithItsContinuations() {
        var reassembler = ACLReassembler(maximumFrameLength: 64)
        let bytes = frame(payload: 100)
        let packets = ACLFragmenter.fragments(of: bytes, handle: 3, maximumDataLength: 27)
        XCTAssertEqual(reassembler.push(packets[0]).dropped, .frameTooLong(handle: 3, frameLength: 104, limit: 64))
        for packet in packets.dropFirst() {
            XCTAssertEqual(reassembler.push(packet), ACLReassembler.Output())
        }
        let next = frame(payload: 1)
        XCTAssertEqual(reassembler.push(ACLPacket(handle: 3, packetBoundary: .firstFlushable, data: next)).frame.map(Array.init), next)
    }

    func testResetForgetsThePartialFrame() {
        var reassembler = ACLReassembler()
        _ = reassembler.push(ACLPacket(handle: 1, packetBoundary: .firstFlushable, data: Array(frame(payload: 40).prefix(10))))
        XCTAssertFalse(reassembler.isIdle)
        reassembler.reset()
        XCTAssertTrue(reassembler.isIdle)
        XCTAssertEqual(reassembler.push(ACLPacket(handle: 1, packetBoundary: .continuing, data: [1])).dropped,
                       .continuationWithoutStart(handle: 1, length: 1))
    }

    func testErrorDescriptionsNameTheHandle() {
        XCTAssertTrue(ACLReassemblyError.frameTooLong(handle: 0x40, frameLength: 2000, limit: 1024).description.contains("0x40"))
    }
}
