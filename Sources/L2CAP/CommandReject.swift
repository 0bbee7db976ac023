import BluetoothWire

/// L2CAP_COMMAND_REJECT_RSP (code 0x01), Core v5.4, Vol 3, Part A, 4.1.
public struct CommandReject: Equatable, Sendable {
    public var identifier: UInt8
    public var reason: Reason
    /// 0 octets (not understood), 2 (actual signalling MTU) or 4 (local and remote CID).
    public var data: [UInt8]

    public init(identifier: UInt8, reason: Reason, data: [UInt8] = []) {
        self.identifier = identifier
        self.reason = reason
        self.data = data
    }

    /// The reply to a signalling command this host does not implement.
    public static func notUnderstood(identifier: UInt8) -> CommandReject {
        CommandReject(identifier: identifier, reason: .commandNotUnderstood)
    }

    init(identifier: UInt8, data reader: inout ByteReader) throws(WireError) {
        self.identifier = identifier
        reason = Reason(rawValue: try reader.readUInt16())
        data = reader.readRemainingBytes()
    }

    func writeData(to writer: inout ByteWriter) {
        writer.writeUInt16(reason.rawValue)
        writer.writeBytes(data)
    }

    /// The reject reason, an open set.
    public struct Reason: RawRepresentable, Hashable, Sendable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        public static let commandNotUnderstood = Reason(rawValue: 0x0000)
        public static let signalingMTUExceeded = Reason(rawValue: 0x0001)
        public static let invalidCIDInRequest = Reason(rawValue: 0x0002)
    }
}
