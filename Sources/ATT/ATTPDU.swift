import BluetoothWire

/// An Attribute Protocol PDU (the L2CAP payload on CID 0x0004), Core v5.4, Vol 3, Part F, 3.3.
///
/// Decoding is one `switch` on the opcode. Opcodes this host does not model become
/// ``unknown(opcode:parameters:)``: a server answers unknown *requests* with Request Not
/// Supported and ignores unknown *commands* (3.4.8). A known opcode with a malformed body throws:
/// the peer is at fault and the answer is Invalid PDU.
public enum ATTPDU: Equatable, Sendable {
    case errorResponse(ErrorResponse)
    case exchangeMTURequest(ExchangeMTURequest)
    case exchangeMTUResponse(ExchangeMTUResponse)
    case findInformationRequest(FindInformationRequest)
    case findInformationResponse(FindInformationResponse)
    case readByTypeRequest(ReadByTypeRequest)
    case readByTypeResponse(ReadByTypeResponse)
    case readRequest(ReadRequest)
    case readResponse(ReadResponse)
    case readBlobRequest(ReadBlobRequest)
    case readBlobResponse(ReadBlobResponse)
    case readByGroupTypeRequest(ReadByGroupTypeRequest)
    case readByGroupTypeResponse(ReadByGroupTypeResponse)
    case writeRequest(WriteRequest)
    case writeResponse(WriteResponse)
    case writeCommand(WriteCommand)
    case handleValueNotification(HandleValueNotification)
    case handleValueIndication(HandleValueIndication)
    case handleValueConfirmation(HandleValueConfirmation)
    case unknown(opcode: ATTOpcode, parameters: [UInt8])

    /// Decodes a PDU; fixed-length PDUs must have no trailing octets.
    public init(decoding pdu: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(pdu)
        let opcode = ATTOpcode(rawValue: try reader.readUInt8())
        switch opcode {
        case .errorResponse: self = .errorResponse(try .init(parameters: &reader))
        case .exchangeMTURequest: self = .exchangeMTURequest(try .init(parameters: &reader))
        case .exchangeMTUResponse: self = .exchangeMTUResponse(try .init(parameters: &reader))
        case .findInformationRequest: self = .findInformationRequest(try .init(parameters: &reader))
        case .findInformationResponse: self = .findInformationResponse(try .init(parameters: &reader))
        case .readByTypeRequest: self = .readByTypeRequest(try .init(parameters: &reader))
        case .readByTypeResponse: self = .readByTypeResponse(try .init(parameters: &reader))
        case .readRequest: self = .readRequest(try .init(parameters: &reader))
        case .readResponse: self = .readResponse(try .init(parameters: &reader))
        case .readBlobRequest: self = .readBlobRequest(try .init(parameters: &reader))
        case .readBlobResponse: self = .readBlobResponse(try .init(parameters: &reader))
        case .readByGroupTypeRequest: self = .readByGroupTypeRequest(try .init(parameters: &reader))
        case .readByGroupTypeResponse: self = .readByGroupTypeResponse(try .init(parameters: &reader))
        case .writeRequest: self = .writeRequest(try .init(parameters: &reader))
        case .writeResponse: self = .writeResponse(try .init(parameters: &reader))
        case .writeCommand: self = .writeCommand(try .init(parameters: &reader))
        case .handleValueNotification: self = .handleValueNotification(try .init(parameters: &reader))
        case .handleValueIndication: self = .handleValueIndication(try .init(parameters: &reader))
        case .handleValueConfirmation: self = .handleValueConfirmation(try .init(parameters: &reader))
        default: self = .unknown(opcode: opcode, parameters: reader.readRemainingBytes())
        }
        try reader.expectEnd()
    }

    public init(decoding pdu: [UInt8]) throws(WireError) {
        try self.init(decoding: pdu[...])
    }
}
