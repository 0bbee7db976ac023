import BluetoothWire
import HCI
import Synchronization
@testable import BLEHost
import PosixThreads
import SupportCore

/// An ``HCITransport`` with a scripted controller behind it, for the host-level fuzz test:
/// commands get success answers (LE Read Buffer Size 27 x 4, LE Create Connection completes at
/// once on handle 0x0040), ACL from the host is completed at once, and ``inject(_:)`` feeds
/// any packet, well-formed or not, to the host on its loop, in order.
final class InMemoryController: HCITransport {
    private struct Delivery {
        var receive: (@Sendable (_ next: @Sendable () -> H4Packet?) -> Void)?
        var ended: (@Sendable (TransportError) -> Void)?
        /// Packets injected before ``start(receive:ended:)``.
        var early: [H4Packet] = []
        var closed = false
    }

    let loop = ThreadExecutor.dataPlane
    private let delivery = Mutex(Delivery())
    private let sentCount = Mutex(0)
    private let sent = Mutex<[H4Packet]>([])
    /// Counts what the host sent; every packet wakes ``waitForSent(timeout:_:)``.
    private let sentTotal = Watched(0)
    /// Whether ACL from the host gets a Number Of Completed Packets at once.
    let completesACL: Bool
    /// Whether LE Create Connection completes at once (else only LE Create Connection Cancel ends it).
    let completesConnections: Bool
    /// Opcodes answered with Command Complete/Status granting zero credits.
    let zeroCreditOpcodes: Set<HCIOpcode>

    init(completesACL: Bool = true, completesConnections: Bool = true, zeroCreditOpcodes: Set<HCIOpcode> = []) {
        self.completesACL = completesACL
        self.completesConnections = completesConnections
        self.zeroCreditOpcodes = zeroCreditOpcodes
    }

    var packetsFromHost: Int { sentCount.withLock { $0 } }

    /// Waits until `condition` holds, looking again as each packet from the host arrives;
    /// false after `timeout` seconds.
    @discardableResult
    func waitForSent(timeout: Double = 10, _ condition: () -> Bool) async -> Bool {
        await sentTotal.wait(timeout: timeout) { _ in condition() }
    }

    /// Every packet the host sent, in order, and forgets them.
    func takeSent() -> [H4Packet] {
        sent.withLock { packets in
            defer { packets = [] }
            return packets
        }
    }

    /// The parameters of commands the host sent with `opcode`.
    func commands(_ opcode: HCIOpcode) -> [[UInt8]] {
        sent.withLock { packets in
            packets.filter { $0.type == .command && $0.bytes.count >= 3
                && UInt16($0.bytes[$0.bytes.startIndex]) | UInt16($0.bytes[$0.bytes.startIndex + 1]) << 8 == opcode.rawValue }
                .map { Array($0.bytes.dropFirst(3)) }
        }
    }

    /// The L2CAP frames (CID, payload) the host sent, assuming unfragmented ACL.
    func l2capFrames() -> [(channel: UInt16, payload: [UInt8])] {
        sent.withLock { packets in
            packets.filter { $0.type == .aclData && $0.bytes.count >= 8 }.map { packet in
                let bytes = Array(packet.bytes)
                return (UInt16(bytes[6]) | UInt16(bytes[7]) << 8, Array(bytes[8...]))
            }
        }
    }

    func inject(_ h4: [UInt8]) {
        guard let first = h4.first else { return }
        let packet = H4Packet(type: HCIPacketType(rawValue: first), bytes: h4.dropFirst())
        let receive = delivery.withLock { delivery -> (@Sendable (_ next: @Sendable () -> H4Packet?) -> Void)? in
            guard !delivery.closed else { return nil }
            if delivery.receive == nil { delivery.early.append(packet) }
            return delivery.receive
        }
        if let receive { loop.execute { Self.deliver([packet], to: receive) } }
    }

    /// Delivers `packets` (H4 bytes each) in one wake-up of the host, as a transport read that
    /// brought them all.
    func injectTogether(_ packets: [[UInt8]]) {
        let packets = packets.compactMap { h4 in h4.first.map { H4Packet(type: HCIPacketType(rawValue: $0), bytes: h4.dropFirst()) } }
        guard let receive = delivery.withLock({ $0.closed ? nil : $0.receive }) else { return }
        loop.execute { Self.deliver(packets, to: receive) }
    }

    func start(receive: @escaping @Sendable (_ next: @Sendable () -> H4Packet?) -> Void, ended: @escaping @Sendable (TransportError) -> Void) {
        let (early, closed) = delivery.withLock { delivery in
            delivery.receive = receive
            delivery.ended = ended
            defer { delivery.early = [] }
            return (delivery.early, delivery.closed)
        }
        loop.execute {
            if !early.isEmpty { Self.deliver(early, to: receive) }
            if closed { ended(Self.closedError) }
        }
    }

    static func deliver(_ packets: [H4Packet], to receive: (_ next: @Sendable () -> H4Packet?) -> Void) {
        let rest = Mutex(packets[...])
        receive { rest.withLock { $0.popFirst() } }
    }

    static let closedError = TransportError(kind: .closed, transport: "in-memory", operation: "read", hint: "the controller closed")

    func send(_ packet: H4Packet) throws(TransportError) {
        sentCount.withLock { $0 += 1 }
        sent.withLock { $0.append(packet) }
        sentTotal.update { $0 += 1 }
        switch packet.type {
        case .command:
            guard packet.bytes.count >= 3 else { return }
            let opcode = HCIOpcode(rawValue: UInt16(packet.bytes[packet.bytes.startIndex]) | UInt16(packet.bytes[packet.bytes.startIndex + 1]) << 8)
            answer(opcode, parameters: Array(packet.bytes.dropFirst(3)))
        case .aclData:
            guard completesACL, packet.bytes.count >= 2 else { return }
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
            inject(HCIEvent.commandStatus(CommandStatusEvent(status: .success, numHCICommandPackets: credits(opcode),
                                                             commandOpcode: opcode)).h4Bytes())
            if opcode == .disconnect, parameters.count >= 2 {
                let handle = UInt16(parameters[0]) | UInt16(parameters[1]) << 8
                inject(HCIEvent.disconnectionComplete(DisconnectionCompleteEvent(
                    status: .success, connectionHandle: handle, reason: .connectionTerminatedByLocalHost)).h4Bytes())
            }
            if opcode == .leCreateConnection, completesConnections, parameters.count >= 12 {
                let address = BluetoothAddress(littleEndianBytes: parameters[6..<12]) ?? .zero
                let complete = LEConnectionCompleteEvent(
                    status: .success, connectionHandle: 0x0040, role: LERole(rawValue: 0),
                    peerAddressType: .public, peerAddress: address, connectionInterval: 24, peripheralLatency: 0,
                    supervisionTimeout: 400, centralClockAccuracy: 0)
                inject(HCIEvent.leMeta(.connectionComplete(complete)).h4Bytes())
            }
        case .leCreateConnectionCancel:
            inject(HCIEvent.commandComplete(CommandCompleteEvent(numHCICommandPackets: credits(opcode), commandOpcode: opcode,
                                                                 returnParameters: [0])).h4Bytes())
            inject(HCIEvent.leMeta(.connectionComplete(LEConnectionCompleteEvent(
                status: .unknownConnectionIdentifier, connectionHandle: 0, role: LERole(rawValue: 0), peerAddressType: .public,
                peerAddress: .zero, connectionInterval: 0, peripheralLatency: 0, supervisionTimeout: 0,
                centralClockAccuracy: 0))).h4Bytes())
        default:
            var returned: [UInt8] = [0]
            if opcode == .leReadBufferSize { returned = [0, 27, 0, 4] }
            if opcode == .readBDADDR { returned = [0, 1, 2, 3, 4, 5, 6] }
            inject(HCIEvent.commandComplete(CommandCompleteEvent(numHCICommandPackets: credits(opcode), commandOpcode: opcode,
                                                                 returnParameters: returned)).h4Bytes())
        }
    }

    private func credits(_ opcode: HCIOpcode) -> UInt8 {
        zeroCreditOpcodes.contains(opcode) ? 0 : 1
    }

    func close() {
        let ended = delivery.withLock { delivery -> (@Sendable (TransportError) -> Void)? in
            guard !delivery.closed else { return nil }
            delivery.closed = true
            return delivery.ended
        }
        if let ended { loop.execute { ended(Self.closedError) } }
    }
}
