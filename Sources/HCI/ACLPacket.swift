import BluetoothWire

/// An HCI ACL data packet, Core v5.4, Vol 4, Part E, 5.4.2.
///
/// The 16-bit header word packs the 12-bit connection handle with the packet-boundary (PB) and
/// broadcast (BC) flags; the data is one fragment of an L2CAP frame (``ACLReassembler``).
public struct ACLPacket: Equatable, Sendable {
    /// The connection handle, 0x000...0xEFF.
    public var handle: UInt16
    public var packetBoundary: PacketBoundary
    public var broadcast: UInt8
    /// The fragment. A slice so that decoding does not copy; its indices need not start at 0.
    public var data: ArraySlice<UInt8>

    /// It is a programmer error to pass a handle over 12 bits, flags over 2 bits or more than
    /// 65535 octets of data.
    public init(handle: UInt16, packetBoundary: PacketBoundary, broadcast: UInt8 = 0, data: ArraySlice<UInt8>) {
        precondition(handle <= 0x0FFF && broadcast <= 3 && data.count <= 0xFFFF, "ACL field out of range")
        self.handle = handle
        self.packetBoundary = packetBoundary
        self.broadcast = broadcast
        self.data = data
    }

    public init(handle: UInt16, packetBoundary: PacketBoundary, broadcast: UInt8 = 0, data: [UInt8]) {
        self.init(handle: handle, packetBoundary: packetBoundary, broadcast: broadcast, data: data[...])
    }

    /// Decodes a packet without its H4 indicator; the Data_Total_Length must match exactly.
    ///
    /// Read by hand rather than through a `ByteReader` (whose reads are calls from here, once
    /// per field of every packet); the errors are those a `ByteReader` would throw. Inlinable,
    /// so that the host decodes into its own frame instead of calling here and copying.
    @inlinable @inline(__always)
    public init(decoding packet: ArraySlice<UInt8>) throws(WireError) {
        let start = packet.startIndex
        guard packet.count >= 4 else {
            throw packet.count < 2 ? .truncated(needed: 2, available: packet.count, offset: 0)
                : .truncated(needed: 2, available: packet.count - 2, offset: 2)
        }
        let word = UInt16(packet[start]) | UInt16(packet[start + 1]) << 8
        let length = Int(packet[start + 2]) | Int(packet[start + 3]) << 8
        guard length == packet.count - 4 else {
            throw .lengthMismatch(field: "ACL Data_Total_Length", declared: length, actual: packet.count - 4)
        }
        handle = word & 0x0FFF
        packetBoundary = PacketBoundary(rawValue: UInt8((word >> 12) & 0x03))
        broadcast = UInt8(word >> 14)
        data = packet[(start + 4)...]
    }

    public init(decoding packet: [UInt8]) throws(WireError) {
        try self.init(decoding: packet[...])
    }

    /// Writes the 4-octet header and the data.
    public func write(to writer: inout ByteWriter) {
        writer.writeUInt16(handle | UInt16(packetBoundary.rawValue) << 12 | UInt16(broadcast) << 14)
        writer.writeUInt16(UInt16(data.count))
        writer.writeBytes(data)
    }

    /// The packet without the H4 indicator.
    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + data.count)
        write(to: &writer)
        return writer.bytes
    }

    /// The packet as sent over H4: indicator 0x02, then ``encode()``.
    public func h4Bytes() -> [UInt8] {
        var writer = ByteWriter(capacity: 5 + data.count)
        writer.writeUInt8(HCIPacketType.aclData.rawValue)
        write(to: &writer)
        return writer.bytes
    }

    /// The Packet_Boundary_Flag, Core v5.4, Vol 4, Part E, 5.4.2. An open set over 2 bits.
    public struct PacketBoundary: RawRepresentable, Hashable, Sendable {
        public let rawValue: UInt8
        @inlinable public init(rawValue: UInt8) { self.rawValue = rawValue & 0x03 }

        /// 0b00: first fragment, not automatically flushable. What an LE host sends.
        public static let firstNonFlushable = PacketBoundary(rawValue: 0b00)
        /// 0b01: continuing fragment.
        public static let continuing = PacketBoundary(rawValue: 0b01)
        /// 0b10: first fragment, automatically flushable. What an LE controller sends.
        public static let firstFlushable = PacketBoundary(rawValue: 0b10)
        /// 0b11: a complete L2CAP PDU, automatically flushable (BR/EDR only; treated as a start).
        public static let complete = PacketBoundary(rawValue: 0b11)

        /// Whether this fragment begins an L2CAP frame.
        @inlinable public var isStart: Bool { rawValue != 0b01 }  // not `.continuing`
    }
}
