import BluetoothWire

/// An HCI event from the controller, Core v5.4, Vol 4, Part E, 5.4.4 (packet) and 7.7 (events).
///
/// Decoding goes through one `switch` on the event code; codes this host does not model become
/// ``unknown(code:parameters:)`` with the raw parameters, so nothing is lost and nothing traps.
/// A known code with a malformed body throws: that is a controller fault worth logging.
public enum HCIEvent: Equatable, Sendable {
    case commandComplete(CommandCompleteEvent)
    case commandStatus(CommandStatusEvent)
    case disconnectionComplete(DisconnectionCompleteEvent)
    case numberOfCompletedPackets(NumberOfCompletedPacketsEvent)
    case leMeta(LEMetaEvent)
    case unknown(code: HCIEventCode, parameters: [UInt8])

    /// Decodes an event packet without its H4 indicator: code, parameter length, parameters.
    public init(decoding packet: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(packet)
        let code = HCIEventCode(rawValue: try reader.readUInt8())
        let length = Int(try reader.readUInt8())
        guard length == reader.remainingCount else {
            throw .lengthMismatch(field: "event Parameter_Total_Length", declared: length, actual: reader.remainingCount)
        }
        switch code {
        case .commandComplete: self = .commandComplete(try CommandCompleteEvent(parameters: &reader))
        case .commandStatus: self = .commandStatus(try CommandStatusEvent(parameters: &reader))
        case .disconnectionComplete: self = .disconnectionComplete(try DisconnectionCompleteEvent(parameters: &reader))
        case .numberOfCompletedPackets:
            self = .numberOfCompletedPackets(try NumberOfCompletedPacketsEvent(parameters: &reader))
        case .leMeta: self = .leMeta(try LEMetaEvent(parameters: &reader))
        default: self = .unknown(code: code, parameters: reader.readRemainingBytes())
        }
        try reader.expectEnd()
    }

    public init(decoding packet: [UInt8]) throws(WireError) {
        try self.init(decoding: packet[...])
    }

    /// The event's code.
    public var code: HCIEventCode {
        switch self {
        case .commandComplete: return .commandComplete
        case .commandStatus: return .commandStatus
        case .disconnectionComplete: return .disconnectionComplete
        case .numberOfCompletedPackets: return .numberOfCompletedPackets
        case .leMeta: return .leMeta
        case let .unknown(code, _): return code
        }
    }

    /// The event packet without the H4 indicator. Parameters longer than 255 octets are a
    /// programmer error (they cannot be expressed in the length field).
    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 64)
        writer.writeUInt8(code.rawValue)
        writer.writeUInt8(0)
        switch self {
        case let .commandComplete(event): event.writeParameters(to: &writer)
        case let .commandStatus(event): event.writeParameters(to: &writer)
        case let .disconnectionComplete(event): event.writeParameters(to: &writer)
        case let .numberOfCompletedPackets(event): event.writeParameters(to: &writer)
        case let .leMeta(event): event.writeParameters(to: &writer)
        case let .unknown(_, parameters): writer.writeBytes(parameters)
        }
        precondition(writer.count - 2 <= 255, "HCI event parameters exceed 255 octets")
        writer.setUInt8(UInt8(writer.count - 2), at: 1)
        return writer.bytes
    }

    /// The event as sent over H4: indicator 0x04, then ``encode()``.
    public func h4Bytes() -> [UInt8] {
        [HCIPacketType.event.rawValue] + encode()
    }
}
