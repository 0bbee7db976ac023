// Fuzz target "h4": H4Framer fed in arbitrary chunks (both append overloads, with draining in
// between and repeated appends that force its buffer compaction), every packet it cuts decoded
// with HCIEvent(decoding:) / ACLPacket(decoding:), and the whole input decoded as one event.
//
// Input: byte 0 seeds the chunking, byte 1 is a repeat count (how many times the stream is fed),
// the rest is the H4 byte stream (indicator, header, payload, ...).
//
// Properties: nothing traps; every byte appended is either cut into a packet, discarded as a bad
// indicator, or still buffered; each packet is header + declared payload; a decoded event or ACL
// packet re-encodes to exactly its bytes (as Tests/BLEFuzzTests/DecoderFuzzTests asserts).

import BluetoothWire
import HCI

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzH4(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    var rng = UInt64(input.byte()) &* 0x9E37_79B9_7F4A_7C15 | 1
    let repeats = 1 + Int(input.byte() % 8)
    let stream = Array(input.rest())

    exerciseEvent(stream[...], describe: true)
    exerciseEvent(offsetSlice(stream))

    var framer = H4Framer()
    var appended = 0
    var cut = 0
    func drain() {
        while let packet = framer.nextPacket() {
            cut += 1 + packet.bytes.count
            check(packet)
        }
    }
    for round in 0..<repeats {
        var position = 0
        while position < stream.count {
            rng = rng &* 6364136223846793005 &+ 1442695040888963407
            let chunk = 1 + Int((rng >> 33) % UInt64(min(64, stream.count)))
            let end = min(stream.count, position + chunk)
            if (rng >> 20) & 1 == 0 {
                framer.append(stream[position..<end])
            } else {
                stream[position..<end].withUnsafeBytes { framer.append($0) }
            }
            appended += end - position
            position = end
            if (rng >> 21) & 3 != 0 || round == repeats - 1 { drain() }
        }
    }
    drain()
    fuzzCheck(framer.nextPacket() == nil, "a drained framer produced another packet")
    fuzzCheck(cut + framer.discardedByteCount + framer.bufferedByteCount == appended,
              "bytes not accounted for: cut \(cut) + discarded \(framer.discardedByteCount) + buffered \(framer.bufferedByteCount) != appended \(appended)")
    return 0
}

private func check(_ packet: H4Packet) {
    let bytes = packet.bytes
    let start = bytes.startIndex
    switch packet.type {
    case .event:
        fuzzCheck(bytes.count >= 2 && bytes.count == 2 + Int(bytes[start + 1]), "event length: \(hexString(bytes))")
        exerciseEvent(bytes)
    case .aclData:
        fuzzCheck(bytes.count >= 4 && bytes.count == 4 + (Int(bytes[start + 2]) | Int(bytes[start + 3]) << 8),
                  "ACL length: \(hexString(bytes))")
        do {
            let acl = try ACLPacket(decoding: bytes)
            fuzzCheck(acl.encode() == Array(bytes), "ACL re-encode differs: \(hexString(bytes))")
            fuzzCheck(acl.h4Bytes() == packet.h4Bytes, "ACL h4Bytes differs")
        } catch {
            fuzzCheck(false, "a framed ACL packet failed to decode: \(error) \(hexString(bytes))")
        }
    case .command:
        fuzzCheck(bytes.count >= 3 && bytes.count == 3 + Int(bytes[start + 2]), "command length: \(hexString(bytes))")
        for command in commandTypes { exerciseCommand(command, bytes) }
    case .synchronousData:
        fuzzCheck(bytes.count >= 3 && bytes.count == 3 + Int(bytes[start + 2]), "SCO length: \(hexString(bytes))")
    case .isoData:
        fuzzCheck(bytes.count >= 4 && bytes.count == 4 + ((Int(bytes[start + 2]) | Int(bytes[start + 3]) << 8) & 0x3FFF),
                  "ISO length: \(hexString(bytes))")
    default:
        fuzzCheck(false, "the framer cut a packet of unknown type \(packet.type)")
    }
}

/// `describe`: also render the event (reflection, slow: only for the whole-input decode).
private func exerciseEvent(_ bytes: ArraySlice<UInt8>, describe: Bool = false) {
    guard let event = try? HCIEvent(decoding: bytes) else { return }
    fuzzCheck(event.encode() == Array(bytes), "event re-encode differs: \(hexString(bytes)) -> \(hexString(event.encode()))")
    if describe {
        _ = String(describing: event)
        _ = event.code.description
    }
    switch event {
    case let .commandComplete(complete):
        _ = complete.status
        _ = try? complete.returnParameters(for: ResetCommand.self)
        _ = try? complete.returnParameters(for: ReadBufferSizeCommand.self)
        _ = try? complete.returnParameters(for: LEReadBufferSizeCommand.self)
        _ = try? complete.returnParameters(for: ReadBDADDRCommand.self)
        _ = try? complete.returnParameters(for: LERemoteConnectionParameterRequestReplyCommand.self)
        _ = try? complete.returnParameters(for: LERemoteConnectionParameterRequestNegativeReplyCommand.self)
        _ = try? complete.returnParameters(for: LESetScanEnableCommand.self)
    case let .leMeta(meta):
        if describe { _ = meta.subevent.description }
    default:
        break
    }
}

/// Every command this host sends (their decoders exist for tests and the scripted controller).
private let commandTypes: [any HCICommand.Type] = [
    DisconnectCommand.self, LEConnectionUpdateCommand.self, LECreateConnectionCancelCommand.self,
    LECreateConnectionCommand.self, LEReadBufferSizeCommand.self, LERemoteConnectionParameterRequestNegativeReplyCommand.self,
    LERemoteConnectionParameterRequestReplyCommand.self, LESetEventMaskCommand.self, LESetRandomAddressCommand.self,
    LESetScanEnableCommand.self, LESetScanParametersCommand.self, ReadBDADDRCommand.self, ReadBufferSizeCommand.self,
    ResetCommand.self, SetEventMaskCommand.self, WriteLEHostSupportCommand.self,
]

/// A command that decodes must survive encode then decode unchanged.
private func exerciseCommand<Command: HCICommand>(_ type: Command.Type, _ bytes: ArraySlice<UInt8>) {
    guard let command = try? Command(decoding: bytes) else { return }
    let again = try? Command(decoding: command.encode())
    fuzzCheck(again == command, "\(Command.self) does not survive re-encoding: \(hexString(bytes))")
}
