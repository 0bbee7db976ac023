import BluetoothWire
import HCI
import Synchronization
@testable import BLEHost

/// An ``HCITransport`` with a scripted controller behind it, for the host-level fuzz test:
/// commands get success answers (LE Read Buffer Size 27 x 4, LE Create Connection completes at
/// once on handle 0x0040), ACL from the host is completed at once, and ``inject(_:)`` feeds
/// any packet, well-formed or not, into the host's reader.
final class InMemoryController: HCITransport {
    private let continuation: AsyncThrowingStream<H4Packet, any Error>.Continuation
    private let stream: Mutex<AsyncThrowingStream<H4Packet, any Error>?>
    private let sentCount = Mutex(0)

    init() {
        let (stream, continuation) = AsyncThrowingStream<H4Packet, any Error>.makeStream()
        self.stream = Mutex(stream)
        self.continuation = continuation
    }

    var packetsFromHost: Int { sentCount.withLock { $0 } }

    func inject(_ h4: [UInt8]) {
        guard let first = h4.first else { return }
        continuation.yield(H4Packet(type: HCIPacketType(rawValue: first), bytes: h4.dropFirst()))
    }

    func send(_ packet: H4Packet) async throws {
        sentCount.withLock { $0 += 1 }
        switch packet.type {
        case .command:
            guard packet.bytes.count >= 3 else { return }
            let opcode = HCIOpcode(rawValue: UInt16(packet.bytes[packet.bytes.startIndex]) | UInt16(packet.bytes[packet.bytes.startIndex + 1]) << 8)
            answer(opcode, parameters: Array(packet.bytes.dropFirst(3)))
        case .aclData:
            guard packet.bytes.count >= 2 else { return }
            let handle = (UInt16(packet.bytes[packet.bytes.startIndex]) | UInt16(packet.bytes[packet.bytes.startIndex + 1]) << 8) & 0x0FFF
            let event = HCIEvent.numberOfCompletedPackets(NumberOfCompletedPacketsEvent(entries: [.init(connectionHandle: handle, numCompletedPackets: 1)]))
            inject(event.h4Bytes())
        default:
            break
        }
    }

    private func answer(_ opcode: HCIOpcode, parameters: [UInt8]) {
        switch opcode {
        case .leCreateConnection, .disconnect, .leConnectionUpdate:
            inject(HCIEvent.commandStatus(CommandStatusEvent(status: .success, numHCICommandPackets: 1, commandOpcode: opcode)).h4Bytes())
            if opcode == .leCreateConnection, parameters.count >= 12 {
                let address = BluetoothAddress(littleEndianBytes: parameters[6..<12]) ?? .zero
                let complete = LEConnectionCompleteEvent(
                    status: .success, connectionHandle: 0x0040, role: LERole(rawValue: 0),
                    peerAddressType: .public, peerAddress: address, connectionInterval: 24, peripheralLatency: 0,
                    supervisionTimeout: 400, centralClockAccuracy: 0)
                inject(HCIEvent.leMeta(.connectionComplete(complete)).h4Bytes())
            }
        default:
            var returned: [UInt8] = [0]
            if opcode == .leReadBufferSize { returned = [0, 27, 0, 4] }
            if opcode == .readBDADDR { returned = [0, 1, 2, 3, 4, 5, 6] }
            inject(HCIEvent.commandComplete(CommandCompleteEvent(numHCICommandPackets: 1, commandOpcode: opcode,
                                                                 returnParameters: returned)).h4Bytes())
        }
    }

    func packets() -> AsyncThrowingStream<H4Packet, any Error> {
        stream.withLock { stream in
            defer { stream = nil }
            return stream ?? AsyncThrowingStream { $0.finish() }
        }
    }

    func close() async {
        continuation.finish()
    }
}
