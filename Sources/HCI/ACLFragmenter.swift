/// Splits an outgoing L2CAP frame into ACL packets no larger than the controller's buffer,
/// Core v5.4, Vol 4, Part E, 5.4.2 (the size comes from LE Read Buffer Size).
public enum ACLFragmenter {
    /// The fragments of `frame` for `handle`: the first flagged ``ACLPacket/PacketBoundary/firstNonFlushable``,
    /// the rest ``ACLPacket/PacketBoundary/continuing``. An empty frame gives one empty packet.
    ///
    /// It is a programmer error to pass a `maximumDataLength` below 1 (controllers report at least 27).
    public static func fragments(of frame: ArraySlice<UInt8>, handle: UInt16, maximumDataLength: Int) -> [ACLPacket] {
        precondition(maximumDataLength > 0, "ACL buffer size must be positive")
        var packets: [ACLPacket] = []
        packets.reserveCapacity(max(1, (frame.count + maximumDataLength - 1) / maximumDataLength))
        var start = frame.startIndex
        repeat {
            let end = min(start + maximumDataLength, frame.endIndex)
            let boundary: ACLPacket.PacketBoundary = start == frame.startIndex ? .firstNonFlushable : .continuing
            packets.append(ACLPacket(handle: handle, packetBoundary: boundary, data: frame[start..<end]))
            start = end
        } while start < frame.endIndex
        return packets
    }

    public static func fragments(of frame: [UInt8], handle: UInt16, maximumDataLength: Int) -> [ACLPacket] {
        fragments(of: frame[...], handle: handle, maximumDataLength: maximumDataLength)
    }
}
