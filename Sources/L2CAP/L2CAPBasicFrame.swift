import BluetoothWire

/// An L2CAP basic information frame (B-frame), Core v5.4, Vol 3, Part A, 3.1: a 2-octet payload
/// length, a 2-octet channel ID, then the payload.
public struct L2CAPBasicFrame: Equatable, Sendable {
    public var channelID: L2CAPChannelID
    /// The payload. A slice so that decoding does not copy; its indices need not start at 0.
    public var payload: ArraySlice<UInt8>

    /// It is a programmer error to pass more than 65535 octets.
    public init(channelID: L2CAPChannelID, payload: ArraySlice<UInt8>) {
        precondition(payload.count <= 0xFFFF, "L2CAP payload exceeds 65535 octets")
        self.channelID = channelID
        self.payload = payload
    }

    public init(channelID: L2CAPChannelID, payload: [UInt8]) {
        self.init(channelID: channelID, payload: payload[...])
    }

    /// Decodes a complete frame (as returned by the ACL reassembler); the length field must match
    /// the bytes exactly.
    ///
    /// Read by hand rather than through a `ByteReader` (whose reads are calls from here, once
    /// per field of every frame); the errors are those a `ByteReader` would throw. Inlinable,
    /// so that the host decodes into its own frame instead of calling here and copying.
    @inlinable @inline(__always)
    public init(decoding frame: ArraySlice<UInt8>) throws(WireError) {
        let start = frame.startIndex
        guard frame.count >= 4 else {
            throw frame.count < 2 ? .truncated(needed: 2, available: frame.count, offset: 0)
                : .truncated(needed: 2, available: frame.count - 2, offset: 2)
        }
        let length = Int(frame[start]) | Int(frame[start + 1]) << 8
        channelID = L2CAPChannelID(rawValue: UInt16(frame[start + 2]) | UInt16(frame[start + 3]) << 8)
        guard length == frame.count - 4 else {
            throw .lengthMismatch(field: "L2CAP PDU length", declared: length, actual: frame.count - 4)
        }
        payload = frame[(start + 4)...]
    }

    public init(decoding frame: [UInt8]) throws(WireError) {
        try self.init(decoding: frame[...])
    }

    public func write(to writer: inout ByteWriter) {
        writer.writeUInt16(UInt16(payload.count))
        writer.writeUInt16(channelID.rawValue)
        writer.writeBytes(payload)
    }

    /// The frame's bytes: header then payload.
    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + payload.count)
        write(to: &writer)
        return writer.bytes
    }
}
