import HCI
import XCTest

final class ACLFragmenterTests: XCTestCase {
    func testSplitsToTheTwentySevenByteBuffer() {
        let frame = [UInt8](repeating: 0, count: 4) + (0..<60).map { UInt8($0) }
        let packets = ACLFragmenter.fragments(of: frame, handle: 0x40, maximumDataLength: 27)
        XCTAssertEqual(packets.map(\.data.count), [27, 27, 10])
        XCTAssertEqual(packets.map(\.packetBoundary), [.firstNonFlushable, .continuing, .continuing])
        XCTAssertEqual(packets.flatMap(\.data), frame)
        XCTAssertTrue(packets.allSatisfy { $0.handle == 0x40 })
    }

    func testSmallFrameIsOnePacketAndEmptyFrameStillSends() {
        XCTAssertEqual(ACLFragmenter.fragments(of: [1, 2, 3], handle: 1, maximumDataLength: 27).count, 1)
        XCTAssertEqual(ACLFragmenter.fragments(of: [], handle: 1, maximumDataLength: 27).count, 1)
        XCTAssertEqual(ACLFragmenter.fragments(of: [UInt8](repeating: 0, count: 54), handle: 1, maximumDataLength: 27).count, 2)
    }
}
