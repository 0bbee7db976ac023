import BluetoothWire

/// One command on the LE signalling channel (CID 0x0005), Core v5.4, Vol 3, Part A, 4.
///
/// Each C-frame on that channel carries exactly one command: code, identifier, length, data.
/// Codes this host does not model decode to ``unknown(code:identifier:data:)``; the host should
/// answer those with a Command Reject "command not understood" (``CommandReject/notUnderstood(identifier:)``).
public enum L2CAPSignal: Equatable, Sendable {
    case commandReject(CommandReject)
    case connectionParameterUpdateRequest(ConnectionParameterUpdateRequest)
    case connectionParameterUpdateResponse(ConnectionParameterUpdateResponse)
    case unknown(code: L2CAPSignalCode, identifier: UInt8, data: [UInt8])

    /// Decodes the payload of an LE signalling C-frame; the length field must match exactly.
    public init(decoding payload: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(payload)
        let code = L2CAPSignalCode(rawValue: try reader.readUInt8())
        let identifier = try reader.readUInt8()
        let length = Int(try reader.readUInt16())
        guard length == reader.remainingCount else {
            throw .lengthMismatch(field: "signalling command length", declared: length, actual: reader.remainingCount)
        }
        switch code {
        case .commandReject:
            self = .commandReject(try CommandReject(identifier: identifier, data: &reader))
        case .connectionParameterUpdateRequest:
            self = .connectionParameterUpdateRequest(try ConnectionParameterUpdateRequest(identifier: identifier, data: &reader))
        case .connectionParameterUpdateResponse:
            self = .connectionParameterUpdateResponse(try ConnectionParameterUpdateResponse(identifier: identifier, data: &reader))
        default:
            self = .unknown(code: code, identifier: identifier, data: reader.readRemainingBytes())
        }
        try reader.expectEnd()
    }

    public init(decoding payload: [UInt8]) throws(WireError) {
        try self.init(decoding: payload[...])
    }

    public var code: L2CAPSignalCode {
        switch self {
        case .commandReject: return .commandReject
        case .connectionParameterUpdateRequest: return .connectionParameterUpdateRequest
        case .connectionParameterUpdateResponse: return .connectionParameterUpdateResponse
        case let .unknown(code, _, _): return code
        }
    }

    public var identifier: UInt8 {
        switch self {
        case let .commandReject(signal): return signal.identifier
        case let .connectionParameterUpdateRequest(signal): return signal.identifier
        case let .connectionParameterUpdateResponse(signal): return signal.identifier
        case let .unknown(_, identifier, _): return identifier
        }
    }

    /// The command's bytes (the C-frame payload, without the L2CAP header).
    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 16)
        writer.writeUInt8(code.rawValue)
        writer.writeUInt8(identifier)
        writer.writeUInt16(0)
        switch self {
        case let .commandReject(signal): signal.writeData(to: &writer)
        case let .connectionParameterUpdateRequest(signal): signal.writeData(to: &writer)
        case let .connectionParameterUpdateResponse(signal): signal.writeData(to: &writer)
        case let .unknown(_, _, data): writer.writeBytes(data)
        }
        writer.setUInt16(UInt16(writer.count - 4), at: 2)
        return writer.bytes
    }

    /// The command wrapped in an L2CAP frame on the LE signalling channel.
    public func frame() -> L2CAPBasicFrame {
        L2CAPBasicFrame(channelID: .leSignaling, payload: encode())
    }
}
