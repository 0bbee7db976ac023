/// Cuts an H4 byte stream (UART or H4-over-TCP) into HCI packets, Core v5.4, Vol 4, Part A, 2.
///
/// Feed it whatever the transport delivers, in slices of any size (one byte at a time is fine),
/// then drain ``nextPacket()`` until it returns `nil`. The framer never traps: an octet that is
/// not a known packet indicator means the stream lost sync (a controller bug or a corrupted
/// link), so that single octet is skipped and counted in ``discardedByteCount``, and framing
/// resumes at the next octet. A caller should log a growing count; it cannot otherwise tell.
///
/// For example:
///
///     var framer = H4Framer()
///     framer.append(received)
///     while let packet = framer.nextPacket() { handle(packet) }
public struct H4Framer: Sendable {
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Octets skipped because they were not a known packet indicator.
    public private(set) var discardedByteCount = 0
    /// Complete packets returned so far.
    public private(set) var packetCount = 0

    public init() {}

    /// Bytes received but not yet returned as a packet.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Adds bytes read from the controller (the transport's read buffer).
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Returns the next complete packet, or `nil` until more bytes arrive.
    public mutating func nextPacket() -> H4Packet? {
        while readIndex < buffer.count {
            let type = HCIPacketType(rawValue: buffer[readIndex])
            guard let headerLength = type.headerLength else {
                readIndex += 1
                discardedByteCount += 1
                continue
            }
            let headerStart = readIndex + 1
            guard buffer.count - headerStart >= headerLength else { return nil }
            let payloadLength = type.payloadLength(header: buffer[headerStart..<headerStart + headerLength])
            let end = headerStart + headerLength + payloadLength
            guard end <= buffer.count else { return nil }
            readIndex = end
            packetCount += 1
            return H4Packet(type: type, bytes: buffer[headerStart..<end])
        }
        return nil
    }

    /// Drops consumed bytes: all of them when the buffer is drained, otherwise only when they
    /// are the larger half, so the cost stays linear in the bytes received.
    private mutating func compact() {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        } else if readIndex > 4096, readIndex > buffer.count / 2 {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
    }
}
