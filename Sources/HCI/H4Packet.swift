/// One complete HCI packet cut from an H4 byte stream by ``H4Framer``.
public struct H4Packet: Equatable, Sendable {
    /// The packet indicator.
    public let type: HCIPacketType
    /// The packet without its indicator: header and payload, as the per-type decoders
    /// (``HCIEvent/init(decoding:)-(ArraySlice<UInt8>)``, ``ACLPacket/init(decoding:)-(ArraySlice<UInt8>)``) expect.
    ///
    /// A slice of the framer's buffer, so its indices need not start at zero; read it with a
    /// `ByteReader`. Holding it past the framer's next `append` costs one copy of the buffer.
    public let bytes: ArraySlice<UInt8>

    public init(type: HCIPacketType, bytes: ArraySlice<UInt8>) {
        self.type = type
        self.bytes = bytes
    }

    /// The packet as it travels over H4: the indicator, then ``bytes``.
    public var h4Bytes: [UInt8] {
        [type.rawValue] + bytes
    }
}
