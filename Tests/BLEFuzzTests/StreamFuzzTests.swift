import BluetoothWire
import HCI
import XCTest
import SupportCore

/// Random and mutated byte streams through H4Framer and ACLReassembler: nothing traps, and every
/// frame handed out respects the configured limit and its own L2CAP length.
final class StreamFuzzTests: XCTestCase {
    func testFramerAndReassemblerOnMutatedStreams() {
        var rng = SplitMix64(seed: 0x4834)
        let valid = Seeds.acl.map { [0x02] + $0 } + Seeds.events.map { [0x04] + $0 }
        var framer = H4Framer()
        var reassemblers: [UInt16: ACLReassembler] = [:]
        var packets = 0
        for _ in 0..<20_000 {
            var chunk = valid[Int.random(in: 0..<valid.count, using: &rng)]
            if Int.random(in: 0..<4, using: &rng) == 0 { chunk = rng.mutate(chunk) }
            framer.append(chunk)
            while let packet = framer.nextPacket() {
                packets += 1
                if packet.type == .event { _ = try? HCIEvent(decoding: packet.bytes) }
                guard packet.type == .aclData, let acl = try? ACLPacket(decoding: packet.bytes) else { continue }
                var reassembler = reassemblers[acl.handle] ?? ACLReassembler(maximumFrameLength: 64)
                if let frame = reassembler.push(acl).frame {
                    XCTAssertLessThanOrEqual(frame.count, 64)
                    XCTAssertEqual(frame.count, (Int(frame[frame.startIndex]) | Int(frame[frame.startIndex + 1]) << 8) + 4)
                }
                reassemblers[acl.handle] = reassembler
            }
        }
        // A corrupted ACL length legitimately swallows following bytes (H4 cannot resync on it).
        XCTAssertGreaterThan(packets, 100)
    }

    func testReassemblerOnRandomFragments() {
        var rng = SplitMix64(seed: 7)
        var reassembler = ACLReassembler(maximumFrameLength: 100)
        for _ in 0..<20_000 {
            let boundary = ACLPacket.PacketBoundary(rawValue: UInt8.random(in: 0...3, using: &rng))
            let data = rng.bytes(Int.random(in: 0...30, using: &rng))
            if let frame = reassembler.push(ACLPacket(handle: 1, packetBoundary: boundary, data: data)).frame {
                XCTAssertLessThanOrEqual(frame.count, 100)
            }
        }
    }
}
