import BluetoothWire
import HCI

extension BLEHost {
    /// Event mask: the Core v5.4 default plus Data Buffer Overflow and LE Meta (bit 61),
    /// Vol 4, Part E, 7.3.1.
    static let eventMask: UInt64 = 0x3DBF_F807_FFFB_FFFF
    /// LE event mask: connection complete, advertising report, connection update complete,
    /// remote features, LTK request, remote connection parameter request, data length change,
    /// enhanced connection complete, PHY update, extended advertising report (7.8.1).
    static let leEventMask: UInt64 = 0x0000_0000_0000_1A7F

    func initialiseController() async throws(BLEHostError) {
        _ = try await execute(ResetCommand(), timeout: configuration.resetTimeout)
        controllerAddress = try? await execute(ReadBDADDRCommand()).bdAddr
        _ = try await execute(SetEventMaskCommand(eventMask: Self.eventMask))
        _ = try await execute(LESetEventMaskCommand(leEventMask: Self.leEventMask))
        let le = try await execute(LEReadBufferSizeCommand())
        var size = Int(le.leACLDataPacketLength)
        var count = Int(le.totalNumLEACLDataPackets)
        if size == 0 || count == 0 {
            // Shared buffers: the BR/EDR numbers apply to LE too (7.8.2).
            let shared = try await execute(ReadBufferSizeCommand())
            size = Int(shared.aclDataPacketLength)
            count = Int(shared.totalNumACLDataPackets)
        }
        guard size >= 1, count >= 1 else {
            throw .malformedResponse(opcode: .leReadBufferSize, reason: "controller reports no ACL buffers (\(size) x \(count))")
        }
        aclBufferSize = size
        aclCredits = ACLCredits(totalBuffers: count)
        if configuration.ownAddressType == .random {
            let address = configuration.randomAddress ?? Self.makeStaticRandomAddress()
            _ = try await execute(LESetRandomAddressCommand(randomAddress: address))
            randomAddress = address
        }
    }

    /// A static random address: 46 random bits with the two top bits set (Vol 6, Part B, 1.3.2.1).
    static func makeStaticRandomAddress() -> BluetoothAddress {
        var bits = UInt64.random(in: 0...0xFFFF_FFFF_FFFF)
        bits |= 0xC000_0000_0000
        if bits & 0x3FFF_FFFF_FFFF == 0 || bits & 0x3FFF_FFFF_FFFF == 0x3FFF_FFFF_FFFF { bits ^= 1 }
        return BluetoothAddress(rawValue: bits)
    }
}
