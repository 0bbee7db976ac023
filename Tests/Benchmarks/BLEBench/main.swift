// ble-bench: notifications/s through the whole receive path.
//
//   swift run -c release ble-bench [notifications] [rounds]
//
// Input: raw H4 bytes of ACL packets (connection handle 0x0040, PB "first, flushable"), each one
// L2CAP frame on the ATT channel carrying a Handle Value Notification for handle 0x0012 with a
// 20-byte MetaWear-like payload (27-byte ACL payload: the LE minimum buffer).
// Ours: H4Framer (fed in 4 KiB reads) -> ACLPacket -> ACLReassembler -> L2CAPBasicFrame -> ATTPDU
// -> a consumer that sums payload bytes. Baseline: one loop over the same bytes at fixed offsets.
import ATT
import BluetoothWire
import HCI
import L2CAP

let arguments = CommandLine.arguments
let notificationCount = arguments.count > 1 ? Int(arguments[1]) ?? 500_000 : 500_000
let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 5 : 5
let payloadLength = 20
let readSize = 4096

/// H4 bytes of `count` notifications with `length`-byte values, cut into ACL packets of at most
/// `aclBuffer` bytes (controller-to-host starts are "first, flushable").
func makeStream(count: Int, length: Int, aclBuffer: Int) -> [UInt8] {
    var writer = ByteWriter(capacity: count * (12 + length))
    for i in 0..<count {
        // MetaWear gyro data: module 0x13, register 0x05, then x/y/z samples.
        var value: [UInt8] = [0x13, 0x05]
        for j in 0..<(length - 2) { value.append(UInt8(truncatingIfNeeded: i &+ j)) }
        let att = HandleValueNotification(attributeHandle: 0x0012, attributeValue: value).encode()
        let frame = L2CAPBasicFrame(channelID: .att, payload: att).encode()
        for var packet in ACLFragmenter.fragments(of: frame, handle: 0x0040, maximumDataLength: aclBuffer) {
            if packet.packetBoundary.isStart { packet.packetBoundary = .firstFlushable }
            writer.writeBytes(packet.h4Bytes())
        }
    }
    return writer.bytes
}

/// The full receive path. Returns (notifications, sum of payload bytes).
func parseWithStack(_ stream: [UInt8]) -> (Int, UInt64) {
    var framer = H4Framer()
    var reassembler = ACLReassembler()
    var notifications = 0
    var sum: UInt64 = 0
    var start = 0
    while start < stream.count {
        let end = min(start + readSize, stream.count)
        framer.append(stream[start..<end])
        start = end
        while let packet = framer.nextPacket() {
            guard packet.type == .aclData, let acl = try? ACLPacket(decoding: packet.bytes),
                  acl.handle == 0x0040, let frameBytes = reassembler.push(acl).frame,
                  let frame = try? L2CAPBasicFrame(decoding: frameBytes), frame.channelID == .att,
                  case let .handleValueNotification(notification)? = try? ATTPDU(decoding: frame.payload),
                  notification.attributeHandle == 0x0012
            else { continue }
            notifications += 1
            for byte in notification.attributeValue { sum &+= UInt64(byte) }
        }
    }
    return (notifications, sum)
}

/// Fixed offsets: H4(1) + ACL header(4) + L2CAP header(4) + ATT opcode and handle(3) = 12.
func parseWithFixedOffsets(_ stream: [UInt8]) -> (Int, UInt64) {
    let packetLength = 12 + payloadLength
    var notifications = 0
    var sum: UInt64 = 0
    var offset = 0
    while offset + packetLength <= stream.count {
        if stream[offset] == 0x02, stream[offset + 9] == 0x1B {
            notifications += 1
            for i in (offset + 12)..<(offset + packetLength) { sum &+= UInt64(stream[i]) }
        }
        offset += packetLength
    }
    return (notifications, sum)
}

func measure(_ name: String, _ body: ([UInt8]) -> (Int, UInt64), _ stream: [UInt8]) -> (rate: Double, result: (Int, UInt64)) {
    let clock = ContinuousClock()
    var best = Duration.seconds(1_000_000)
    var result = (0, UInt64(0))
    for _ in 0..<rounds {
        let elapsed = clock.measure { result = body(stream) }
        best = min(best, elapsed)
    }
    let seconds = Double(best.components.seconds) + Double(best.components.attoseconds) / 1e18
    let rate = Double(result.0) / seconds
    print("\(name): \(result.0) notifications in \(Int(seconds * 1e6)) us (best of \(rounds)) = \(Int(rate)) notifications/s, payload sum \(result.1)")
    return (rate, result)
}

let stream = makeStream(count: notificationCount, length: payloadLength, aclBuffer: 27)
print("ble-bench: \(notificationCount) notifications, \(stream.count) H4 bytes, \(payloadLength)-byte payloads, \(readSize)-byte reads")
let ours = measure("stack   ", parseWithStack, stream)
let baseline = measure("baseline", parseWithFixedOffsets, stream)
precondition(ours.result == baseline.result, "stack and baseline disagree: \(ours.result) vs \(baseline.result)")
let ratio = ours.rate / baseline.rate
print("ratio stack/baseline: \(Double(Int(ratio * 10000)) / 10000) (target: stack >= 2,000,000 notifications/s: \(ours.rate >= 2_000_000 ? "met" : "NOT met"))")

// Extra: 60-byte values (ATT MTU 65) over 27-byte ACL buffers, so every notification is
// reassembled from 3 fragments. No fixed-offset baseline for this one.
let fragmented = makeStream(count: notificationCount, length: 60, aclBuffer: 27)
print("fragmented: \(notificationCount) notifications of 60 bytes in 3 ACL fragments each, \(fragmented.count) H4 bytes")
_ = measure("stack (fragmented)", parseWithStack, fragmented)
