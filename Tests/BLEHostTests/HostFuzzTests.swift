import ATT
import BluetoothWire
import HCI
import L2CAP
import Logging
import XCTest
@testable import BLEHost
import SupportCore

/// Acceptance 5: random and mutated HCI events, ACL fragments, L2CAP frames and ATT PDUs fed
/// through the host's real reader and dispatch (an in-memory transport) never crash it, and the
/// host still works afterwards. Reproducible: the seed is printed on failure.
final class HostFuzzTests: XCTestCase {
    func testHostSurvivesHundredThousandHostilePackets() async throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["FUZZ_SEED"] ?? "") ?? 0x6779_726F_6761_7465
        var random = FuzzRandom(seed: seed)
        let controller = InMemoryController()
        var logger = Logger(label: "fuzz")
        logger.logLevel = .critical
        var configuration = BLEHostConfiguration()
        configuration.attRequestTimeout = .milliseconds(50)
        configuration.commandTimeout = .milliseconds(200)
        let host = BLEHost(transport: controller, configuration: configuration, logger: logger)
        try await host.start()
        let peer = try BluetoothAddress(parsing: "C4:BE:84:00:00:01")
        let connection = try await host.connect(to: peer, addressType: .public)
        XCTAssertEqual(connection.handle, 0x0040)

        // A client keeps issuing GATT requests while the fuzz runs; every outcome is fine but a hang.
        let client = Task {
            let characteristic = GATTCharacteristic(uuid: BluetoothUUID(uuid16: 0x2A29), declarationHandle: 0x10,
                                                    valueHandle: 0x11, endHandle: 0x13, properties: [.read, .notify])
            var outcomes = 0
            while !Task.isCancelled {
                _ = try? await connection.gatt.read(characteristic)
                _ = try? await connection.gatt.discoverPrimaryServices()
                outcomes += 1
                // why: paces a client whose requests may fail at once (links the fuzz tore down), so it does not spin; no event to wait on.
                try? await Task.sleep(for: .milliseconds(1))
            }
            return outcomes
        }

        let total = 120_000
        var injected = 0
        for index in 0..<total {
            if index % 1000 == 0 {
                // Keep links around to route ACL to: (re)connect handles 0x40 and 0x41.
                for handle: UInt16 in [0x40, 0x41] {
                    controller.inject(HCIEvent.leMeta(.connectionComplete(LEConnectionCompleteEvent(
                        status: .success, connectionHandle: handle, role: LERole(rawValue: 0), peerAddressType: .public,
                        peerAddress: BluetoothAddress(rawValue: 0xC4BE_8400_0000 | UInt64(handle)), connectionInterval: 24,
                        peripheralLatency: 0, supervisionTimeout: 400, centralClockAccuracy: 0))).h4Bytes())
                    injected += 1
                }
                await Task.yield()
            }
            controller.inject(random.packet())
            injected += 1
        }
        // Restore a command credit in case the fuzz granted zero, then a sentinel link 0x0abc:
        // packets are dispatched in order, so once it shows up everything before it was handled.
        controller.inject(HCIEvent.commandComplete(CommandCompleteEvent(numHCICommandPackets: 1, commandOpcode: .noOperation,
                                                                        returnParameters: [])).h4Bytes())
        controller.inject(HCIEvent.leMeta(.connectionComplete(LEConnectionCompleteEvent(
            status: .success, connectionHandle: 0x0ABC, role: LERole(rawValue: 0), peerAddressType: .public,
            peerAddress: BluetoothAddress(rawValue: 0xABC), connectionInterval: 24, peripheralLatency: 0,
            supervisionTimeout: 400, centralClockAccuracy: 0))).h4Bytes())
        // The host announces no new link; its status is polled until the sentinel shows.
        let started = ContinuousClock.now
        _ = await eventually(timeout: 300) { await host.status().connections.contains { $0.handle == 0x0ABC } }
        let status = await host.status()
        XCTAssertTrue(status.connections.contains { $0.handle == 0x0ABC }, "sentinel not reached; seed \(seed)")
        client.cancel()
        let outcomes = await client.value
        XCTAssertEqual(status.state, .ready, "seed \(seed)")
        XCTAssertGreaterThan(status.malformedPackets, 1000, "the fuzz should produce malformed packets")
        XCTAssertGreaterThan(outcomes, 0)
        print("host fuzz: \(injected) packets, malformed \(status.malformedPackets), unknown \(status.unknownPackets), "
              + "reassembly errors \(status.reassemblyErrors), GATT rounds \(outcomes), "
              + "dispatched in \(ContinuousClock.now - started) after the last injection, seed \(seed)")

        // Still usable: a scan round trip through the scripted controller.
        let found = try await host.scan(for: .milliseconds(10))
        XCTAssertTrue(found.isEmpty)
        await host.stop()
        let afterStop = await host.status()
        XCTAssertEqual(afterStop.connections.count, 0)
    }
}

/// Packet generator: valid seeds, mutations of them, and noise, in H4 form (indicator first).
/// The host fuzz's draws (its own mutation rules) on the shared generator, SupportCore's SplitMix64.
struct FuzzRandom {
    var generator: SplitMix64

    init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    mutating func next() -> UInt64 { generator.next() }

    mutating func int(_ range: Range<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
    mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next()) }
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in byte() } }

    mutating func mutate(_ input: [UInt8]) -> [UInt8] {
        var bytes = input
        for _ in 0..<int(1..<4) {
            switch int(0..<6) {
            case 0 where !bytes.isEmpty: bytes[int(0..<bytes.count)] ^= 1 << UInt8(int(0..<8))
            case 1 where !bytes.isEmpty: bytes[int(0..<bytes.count)] = byte()
            case 2: bytes.insert(byte(), at: int(0..<bytes.count + 1))
            case 3 where !bytes.isEmpty: bytes.remove(at: int(0..<bytes.count))
            case 4 where !bytes.isEmpty: bytes.removeLast(int(0..<bytes.count))
            default: bytes += self.bytes(int(1..<8))
            }
        }
        return bytes
    }

    static let events: [[UInt8]] = [
        "0e 04 01 03 0c 00", "0e 07 01 02 20 00 1b 00 10", "0f 04 00 01 0d 20", "05 04 00 40 00 13",
        "05 04 00 41 00 08", "13 05 01 40 00 01 00", "13 09 02 40 00 01 00 41 00 03 00",
        "3e 13 01 00 41 00 00 01 f6 05 04 03 02 c1 18 00 00 00 48 00 05",
        "3e 1f 0a 00 40 00 00 01 f6 05 04 03 02 c1 00 00 00 00 00 00 00 00 00 00 00 00 18 00 00 00 48 00 05",
        "3e 1d 02 02 00 01 f6 05 04 03 02 c1 03 02 01 06 c4 04 01 f6 05 04 03 02 c1 04 03 09 4d 57 b0",
        "3e 1d 0d 01 03 00 01 f6 05 04 03 02 c1 01 00 ff 7f c4 00 00 00 00 00 00 00 00 00 03 02 01 06",
        "3e 0a 03 00 40 00 06 00 00 00 f4 01", "3e 0b 06 40 00 06 00 0c 00 00 00 f4 01", "10 01 01", "1a 01 01",
    ].map { Hex.bytes($0)! }

    static let att: [[UInt8]] = [
        "01 0a 11 00 0a", "01 10 01 00 0a", "03 17 00", "05 01 04 00 02 29", "09 07 10 00 12 11 00 29 2a",
        "11 06 01 00 05 00 00 18 06 00 09 00 01 18", "0b 4d 57", "0d 01 02", "13", "1b 11 00 13 05 01 00 02 00 03 00",
        "1d 11 00 ff", "02 f7 00", "0a 03 00", "12 0d 00 01 00", "52 0f 00 13 01 01", "17 11 00 00 00 aa", "19",
    ].map { Hex.bytes($0)! }

    static let signals: [[UInt8]] = [
        "12 01 08 00 06 00 0c 00 00 00 f4 01", "12 02 08 00 20 03 20 03 04 00 0a 00", "13 01 02 00 00 00",
        "01 02 02 00 00 00", "0a 03 02 00 02 00", "14 04 0a 00 80 00 40 00 17 00 00 02 01 00",
    ].map { Hex.bytes($0)! }

    mutating func pick(_ list: [[UInt8]]) -> [UInt8] { list[int(0..<list.count)] }

    /// One H4 packet.
    mutating func packet() -> [UInt8] {
        switch int(0..<10) {
        case 0, 1, 2:
            var event = pick(Self.events)
            if int(0..<3) > 0 { event = mutate(event) }
            return [0x04] + event
        case 3:
            // A random event with a consistent length field (reaches the per-event decoders).
            let body = bytes(int(0..<40))
            let code: UInt8 = int(0..<2) == 0 ? [0x0e, 0x0f, 0x05, 0x13, 0x3e][int(0..<5)] : byte()
            return [0x04, code, UInt8(body.count)] + body
        case 4, 5, 6, 7:
            return acl()
        case 8:
            return mutate([0x02] + Array(acl().dropFirst()))
        default:
            // Noise, including unknown packet types.
            return [[0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0xff][int(0..<7)]] + bytes(int(0..<30))
        }
    }

    /// An ACL packet to a live or unknown handle carrying a (possibly mutated, possibly partial)
    /// L2CAP frame on the ATT, signalling or a random channel.
    mutating func acl() -> [UInt8] {
        let channel: UInt16
        var payload: [UInt8]
        switch int(0..<6) {
        case 0, 1, 2: channel = 4; payload = pick(Self.att)
        case 3: channel = 5; payload = pick(Self.signals)
        case 4: channel = UInt16(truncatingIfNeeded: next()); payload = bytes(int(0..<20))
        default: channel = 4; payload = [byte()] + bytes(int(0..<30))
        }
        if int(0..<2) == 0 { payload = mutate(payload) }
        var frame = [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(channel & 0xFF), UInt8(channel >> 8)] + payload
        if int(0..<8) == 0 { frame[0] = byte() } // wrong L2CAP length
        let handle: UInt16 = [0x40, 0x41, 0x40, UInt16(next() & 0x0FFF)][int(0..<4)]
        // Split: a start fragment, a continuation, or the whole frame.
        let flags: UInt16
        var data = frame
        switch int(0..<4) {
        case 0:
            flags = 0b10
            data = Array(frame.prefix(int(0..<frame.count + 1)))
        case 1:
            flags = 0b01
            data = Array(frame.suffix(int(0..<frame.count + 1)))
        default:
            flags = int(0..<8) == 0 ? UInt16(int(0..<4)) : 0b10
        }
        let word = handle | flags << 12
        var length = UInt16(data.count)
        if int(0..<16) == 0 { length = UInt16(truncatingIfNeeded: next()) } // wrong ACL length
        return [0x02, UInt8(word & 0xFF), UInt8(word >> 8), UInt8(length & 0xFF), UInt8(length >> 8)] + data
    }
}
