import ATT
import BluetoothWire
import GAP
import HCI
import L2CAP
import XCTest
import SupportCore

/// Seeded random and mutated inputs through every decoder. A trap fails the whole run, so
/// reaching the end is the assertion; decoded values must also survive a re-encode.
final class DecoderFuzzTests: XCTestCase {
    static let iterations = 25_000  // 25k random + 25k mutated + 100k header-framed inputs

    /// Feeds one input to every decoder.
    func exercise(_ input: [UInt8]) {
        if let event = try? HCIEvent(decoding: input) {
            XCTAssertEqual(event.encode(), input)
            if case let .commandComplete(complete) = event { exerciseReturnParameters(complete) }
        }
        if let packet = try? ACLPacket(decoding: input) {
            XCTAssertEqual(packet.encode(), input)
        }
        if let frame = try? L2CAPBasicFrame(decoding: input) {
            XCTAssertEqual(frame.encode(), input)
        }
        if let signal = try? L2CAPSignal(decoding: input) {
            XCTAssertEqual(signal.encode(), input)
            if case let .connectionParameterUpdateRequest(request) = signal { _ = request.validate() }
        }
        if let pdu = try? ATTPDU(decoding: input) {
            XCTAssertEqual(try? ATTPDU(decoding: pdu.encode()), pdu)
        }
        let advertising = AdvertisingData(bytes: input)
        _ = advertising.localName
        _ = try? ResetCommand(decoding: input)
        _ = try? LECreateConnectionCommand(decoding: input)
        _ = try? LEConnectionUpdateCommand(decoding: input)
        _ = try? LESetScanEnableCommand(decoding: input)
    }

    func exerciseReturnParameters(_ event: CommandCompleteEvent) {
        _ = try? event.returnParameters(for: ResetCommand.self)
        _ = try? event.returnParameters(for: ReadBufferSizeCommand.self)
        _ = try? event.returnParameters(for: LEReadBufferSizeCommand.self)
        _ = try? event.returnParameters(for: ReadBDADDRCommand.self)
        _ = try? event.returnParameters(for: LERemoteConnectionParameterRequestReplyCommand.self)
    }

    func testRandomBytes() {
        var rng = SplitMix64(seed: 0x6779_726F)
        for _ in 0..<Self.iterations {
            exercise(rng.bytes(Int.random(in: 0...40, using: &rng)))
        }
    }

    func testMutatedSeeds() {
        var rng = SplitMix64(seed: 0xB1E)
        let seeds = Seeds.events + Seeds.acl + Seeds.l2cap + Seeds.att + Seeds.advertising
        for _ in 0..<Self.iterations {
            exercise(rng.mutate(seeds[Int.random(in: 0..<seeds.count, using: &rng)]))
        }
    }

    /// Random bytes behind a valid header, so the body decoders (not just the length checks) run.
    func testValidHeadersWithRandomBodies() {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<Self.iterations {
            let body = rng.bytes(Int.random(in: 0...40, using: &rng))
            let codes: [UInt8] = [0x0E, 0x0F, 0x05, 0x13, 0x3E]
            let subevents: [UInt8] = [0x01, 0x02, 0x03, 0x06, 0x0A, 0x0D]
            var event = [codes[Int.random(in: 0..<codes.count, using: &rng)]]
            let eventBody = event[0] == 0x3E ? [subevents[Int.random(in: 0..<subevents.count, using: &rng)]] + body : body
            event += [UInt8(eventBody.count)] + eventBody
            exercise(event)
            exercise([UInt8(body.count + 3), 0x00, 0x05, 0x00] + [UInt8.random(in: 0x10...0x14, using: &rng), 1,
                                                                UInt8(body.count), 0] + body)
            exercise([UInt8.random(in: 0...0x20, using: &rng)] + body)
            exercise([UInt8(body.count), 0x00, 0x04, 0x00] + body)
        }
    }
}
