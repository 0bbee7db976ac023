// Fuzz target "acl": ACL packets, their reassembly into L2CAP frames, and the L2CAP decoders.
//
// Input: byte 0 picks the reassembler's frame limit; byte 1 is the fragment size used for the
// fragmenter round trip; the rest is used twice:
//  - whole, as one ACL packet, one L2CAP B-frame and one LE signalling command (decode, re-encode);
//  - as a sequence of fragments `[flags][length][data...]` pushed into per-handle reassemblers
//    (flags: bits 0-1 packet boundary, bits 2-3 handle, bits 4-5 broadcast, bit 6 reset the
//    handle's reassembler first, bit 7 deliver the fragment through encode + decode at an offset).
//
// Properties: nothing traps; a decoded packet, frame or signal re-encodes to exactly its bytes;
// every frame the reassembler hands out is within its limit, matches its own L2CAP length and
// decodes as a B-frame (and its payload as ATT or signalling, by channel); fragmenting any frame
// that fits the limit and pushing the fragments into a fresh reassembler gives the frame back.

import ATT
import BluetoothWire
import HCI
import L2CAP

private let limits = [4, 5, 8, 23, 27, 64, 251, 521, 1024, 4096, 65539]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzACL(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let limit = limits[Int(input.byte()) % limits.count]
    let fragmentSize = 1 + Int(input.byte())
    let body = Array(input.rest())

    decodeWhole(body[...])
    decodeWhole(offsetSlice(body))

    // Fragments through per-handle reassemblers.
    var reassemblers: [UInt16: ACLReassembler] = [:]
    var reader = FuzzInput(body)
    while !reader.isAtEnd {
        let flags = reader.byte()
        let data = reader.take(Int(reader.byte()))
        let handle = UInt16((flags >> 2) & 0x03) | 0x40
        var packet = ACLPacket(handle: handle, packetBoundary: .init(rawValue: flags & 0x03), broadcast: (flags >> 4) & 0x03, data: data)
        if flags & 0x80 != 0 {
            guard let decoded = try? ACLPacket(decoding: offsetSlice(packet.encode(), padding: 5)) else {
                fuzzCheck(false, "an encoded ACL packet failed to decode: \(hexString(packet.encode()))")
                return 0
            }
            fuzzCheck(decoded == packet, "ACL packet changed through encode + decode")
            packet = decoded
        }
        var reassembler = reassemblers[handle] ?? ACLReassembler(maximumFrameLength: limit)
        if flags & 0x40 != 0 {
            reassembler.reset()
            fuzzCheck(reassembler.isIdle, "reset left a frame in progress")
        }
        let output = reassembler.push(packet)
        if let frame = output.frame { checkFrame(frame, limit: limit) }
        if let dropped = output.dropped { _ = dropped.description }
        reassemblers[handle] = reassembler
    }

    // Fragmenter then reassembler: a frame within the limit comes back whole. The frame is the
    // body with its L2CAP length field made consistent.
    if body.count >= 4, body.count - 4 <= 0xFFFF, body.count <= limit {
        var frame = body
        frame[0] = UInt8((body.count - 4) & 0xFF)
        frame[1] = UInt8((body.count - 4) >> 8)
        var reassembler = ACLReassembler(maximumFrameLength: limit)
        var result: ArraySlice<UInt8>?
        let fragments = ACLFragmenter.fragments(of: frame, handle: 0x0EFF, maximumDataLength: fragmentSize)
        fuzzCheck(fragments.reduce(0) { $0 + $1.data.count } == frame.count, "fragments do not add up to the frame")
        for (n, fragment) in fragments.enumerated() {
            fuzzCheck(fragment.data.count <= fragmentSize, "fragment over the maximum data length")
            let output = reassembler.push(fragment)
            fuzzCheck(output.dropped == nil, "reassembly of a well-formed frame dropped bytes: \(String(describing: output.dropped))")
            if let frame = output.frame {
                fuzzCheck(n == fragments.count - 1, "a frame came out before its last fragment")
                result = frame
            }
        }
        fuzzCheck(result.map(Array.init) == frame, "fragment + reassemble did not give the frame back (limit \(limit), fragment \(fragmentSize))")
        fuzzCheck(reassembler.isIdle, "reassembler not idle after a complete frame")
    }
    return 0
}

private func decodeWhole(_ bytes: ArraySlice<UInt8>) {
    if let packet = try? ACLPacket(decoding: bytes) {
        fuzzCheck(packet.encode() == Array(bytes), "ACL re-encode differs: \(hexString(bytes))")
        fuzzCheck(packet.packetBoundary.isStart == (packet.packetBoundary != .continuing), "isStart")
    }
    if let frame = try? L2CAPBasicFrame(decoding: bytes) {
        fuzzCheck(frame.encode() == Array(bytes), "B-frame re-encode differs: \(hexString(bytes))")
        _ = frame.channelID.description
    }
    decodeSignal(bytes)
}

private func decodeSignal(_ bytes: ArraySlice<UInt8>) {
    guard let signal = try? L2CAPSignal(decoding: bytes) else { return }
    fuzzCheck(signal.encode() == Array(bytes), "signal re-encode differs: \(hexString(bytes))")
    fuzzCheck(signal.frame().payload == bytes, "signal frame payload differs")
    _ = signal.code.description
    if case let .connectionParameterUpdateRequest(request) = signal {
        let verdict = request.validate()
        if case let .reject(violation) = verdict { _ = violation.description }
        _ = verdict.result
    }
}

private func checkFrame(_ frame: ArraySlice<UInt8>, limit: Int) {
    let start = frame.startIndex
    fuzzCheck(frame.count >= 4 && frame.count <= limit, "frame of \(frame.count) bytes (limit \(limit))")
    fuzzCheck(frame.count == (Int(frame[start]) | Int(frame[start + 1]) << 8) + 4, "frame length field disagrees: \(hexString(frame))")
    guard let basic = try? L2CAPBasicFrame(decoding: frame) else {
        fuzzCheck(false, "a reassembled frame is not a B-frame: \(hexString(frame))")
        return
    }
    switch basic.channelID {
    case .att:
        if let pdu = try? ATTPDU(decoding: basic.payload) { _ = pdu.opcode }
    case .leSignaling:
        decodeSignal(basic.payload)
    default:
        break
    }
}
