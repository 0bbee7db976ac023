@testable import BLEHost
import Glibc
import HCI
import Logging
import Synchronization
import XCTest
import PosixThreads
import SupportCore

/// The user channel's semantics without a kernel Bluetooth stack: a `SOCK_SEQPACKET` pair
/// returns one packet per `read`, as the HCI socket does.
final class PacketSocketReadTests: XCTestCase {
    /// A paced wake-up reads every packet queued since the last one, not one per interval.
    func testAPacedReadDrainsEveryQueuedPacket() async throws {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair), 0)
        let controller = pair[1]
        defer { close(controller) }
        let loop = try! ThreadExecutor(name: "test-loop")
        let transport = FileDescriptorTransport(descriptor: pair[0], name: "seqpacket", loop: loop, logger: Logger(label: "test"))
        defer { transport.close() }
        XCTAssertTrue(FileDescriptorTransport.isPacketSocket(pair[0]))
        struct Received: Sendable { var packets: [UInt16] = [], reads: Set<UInt64> = [] }
        let received = Watched(Received())
        transport.start(receive: { next in
            let read = loop.currentRead
            while let packet = next() {
                let number = UInt16(packet.bytes[packet.bytes.startIndex + 2]) | UInt16(packet.bytes[packet.bytes.startIndex + 3]) << 8
                received.update { $0.packets.append(number); $0.reads.insert(read) }
            }
        }, ended: { _ in })

        loop.setReadInterval(seconds: 0.3)
        let allowance = loop.allowPacedReads()
        // An HCI event per message (vendor event 0xFF, 2 bytes: the packet's number).
        func send(_ number: UInt16) {
            let bytes: [UInt8] = [HCIPacketType.event.rawValue, 0xFF, 2, UInt8(number & 0xFF), UInt8(number >> 8)]
            XCTAssertEqual(bytes.withUnsafeBytes { Glibc.send(controller, $0.baseAddress!, $0.count, Int32(MSG_DONTWAIT)) },
                           bytes.count, "send \(number): errno \(errno)")
        }
        // The first is read at once and starts an interval; the rest queue in the socket meanwhile.
        send(0)
        _ = await received.wait(timeout: 5) { !$0.packets.isEmpty }
        let count: UInt16 = 200
        for number in 1..<count { send(number) }
        _ = await received.wait(timeout: 5) { $0.packets.count >= Int(count) }
        let result = received.value
        XCTAssertEqual(result.packets, Array(0..<count), "every queued packet, once, in order")
        XCTAssertLessThanOrEqual(result.reads.count, 3, "one wake-up took the queued packets, not one per interval")
        allowance.release()
    }

    /// A stream and a tty are not packet sockets: they keep one `read` per wake-up.
    func testStreamsAreNotPacketSockets() {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        defer { pair.forEach { _ = close($0) } }
        XCTAssertFalse(FileDescriptorTransport.isPacketSocket(pair[0]))
        let pipe = TestPipe()
        XCTAssertFalse(FileDescriptorTransport.isPacketSocket(pipe.readEnd), "ENOTSOCK: a stream")
    }
}
