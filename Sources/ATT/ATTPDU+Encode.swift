import BluetoothWire

extension ATTPDU {
    /// The PDU's opcode.
    public var opcode: ATTOpcode {
        switch self {
        case .errorResponse: return .errorResponse
        case .exchangeMTURequest: return .exchangeMTURequest
        case .exchangeMTUResponse: return .exchangeMTUResponse
        case .findInformationRequest: return .findInformationRequest
        case .findInformationResponse: return .findInformationResponse
        case .readByTypeRequest: return .readByTypeRequest
        case .readByTypeResponse: return .readByTypeResponse
        case .readRequest: return .readRequest
        case .readResponse: return .readResponse
        case .readBlobRequest: return .readBlobRequest
        case .readBlobResponse: return .readBlobResponse
        case .readByGroupTypeRequest: return .readByGroupTypeRequest
        case .readByGroupTypeResponse: return .readByGroupTypeResponse
        case .writeRequest: return .writeRequest
        case .writeResponse: return .writeResponse
        case .writeCommand: return .writeCommand
        case .handleValueNotification: return .handleValueNotification
        case .handleValueIndication: return .handleValueIndication
        case .handleValueConfirmation: return .handleValueConfirmation
        case let .unknown(opcode, _): return opcode
        }
    }

    /// The PDU's bytes: opcode then parameters.
    public func encode() -> [UInt8] {
        switch self {
        case let .errorResponse(pdu): return pdu.encode()
        case let .exchangeMTURequest(pdu): return pdu.encode()
        case let .exchangeMTUResponse(pdu): return pdu.encode()
        case let .findInformationRequest(pdu): return pdu.encode()
        case let .findInformationResponse(pdu): return pdu.encode()
        case let .readByTypeRequest(pdu): return pdu.encode()
        case let .readByTypeResponse(pdu): return pdu.encode()
        case let .readRequest(pdu): return pdu.encode()
        case let .readResponse(pdu): return pdu.encode()
        case let .readBlobRequest(pdu): return pdu.encode()
        case let .readBlobResponse(pdu): return pdu.encode()
        case let .readByGroupTypeRequest(pdu): return pdu.encode()
        case let .readByGroupTypeResponse(pdu): return pdu.encode()
        case let .writeRequest(pdu): return pdu.encode()
        case let .writeResponse(pdu): return pdu.encode()
        case let .writeCommand(pdu): return pdu.encode()
        case let .handleValueNotification(pdu): return pdu.encode()
        case let .handleValueIndication(pdu): return pdu.encode()
        case let .handleValueConfirmation(pdu): return pdu.encode()
        case let .unknown(opcode, parameters): return [opcode.rawValue] + parameters
        }
    }
}
