/// An Attribute Protocol opcode, Core v5.4, Vol 3, Part F, 3.3.1 and 3.4.8 (Table 3.37).
///
/// An open set over the raw octet (bit 6 is the Command flag, bit 7 the Authentication Signature
/// flag), so opcodes this host does not model still decode and can be answered with
/// Request Not Supported.
public struct ATTOpcode: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Bit 6: a command, which gets no response.
    public var isCommand: Bool { rawValue & 0x40 != 0 }
    /// Bit 7: an Authentication Signature follows the parameters.
    public var hasAuthenticationSignature: Bool { rawValue & 0x80 != 0 }

    public static let errorResponse = ATTOpcode(rawValue: 0x01)
    public static let exchangeMTURequest = ATTOpcode(rawValue: 0x02)
    public static let exchangeMTUResponse = ATTOpcode(rawValue: 0x03)
    public static let findInformationRequest = ATTOpcode(rawValue: 0x04)
    public static let findInformationResponse = ATTOpcode(rawValue: 0x05)
    public static let findByTypeValueRequest = ATTOpcode(rawValue: 0x06)
    public static let findByTypeValueResponse = ATTOpcode(rawValue: 0x07)
    public static let readByTypeRequest = ATTOpcode(rawValue: 0x08)
    public static let readByTypeResponse = ATTOpcode(rawValue: 0x09)
    public static let readRequest = ATTOpcode(rawValue: 0x0A)
    public static let readResponse = ATTOpcode(rawValue: 0x0B)
    public static let readBlobRequest = ATTOpcode(rawValue: 0x0C)
    public static let readBlobResponse = ATTOpcode(rawValue: 0x0D)
    public static let readMultipleRequest = ATTOpcode(rawValue: 0x0E)
    public static let readMultipleResponse = ATTOpcode(rawValue: 0x0F)
    public static let readByGroupTypeRequest = ATTOpcode(rawValue: 0x10)
    public static let readByGroupTypeResponse = ATTOpcode(rawValue: 0x11)
    public static let writeRequest = ATTOpcode(rawValue: 0x12)
    public static let writeResponse = ATTOpcode(rawValue: 0x13)
    public static let prepareWriteRequest = ATTOpcode(rawValue: 0x16)
    public static let prepareWriteResponse = ATTOpcode(rawValue: 0x17)
    public static let executeWriteRequest = ATTOpcode(rawValue: 0x18)
    public static let executeWriteResponse = ATTOpcode(rawValue: 0x19)
    public static let handleValueNotification = ATTOpcode(rawValue: 0x1B)
    public static let handleValueIndication = ATTOpcode(rawValue: 0x1D)
    public static let handleValueConfirmation = ATTOpcode(rawValue: 0x1E)
    public static let writeCommand = ATTOpcode(rawValue: 0x52)
    public static let signedWriteCommand = ATTOpcode(rawValue: 0xD2)
}

extension ATTOpcode: CustomStringConvertible {
    public var description: String {
        let names: [UInt8: String] = [
            0x01: "errorResponse", 0x02: "exchangeMTURequest", 0x03: "exchangeMTUResponse",
            0x04: "findInformationRequest", 0x05: "findInformationResponse", 0x06: "findByTypeValueRequest",
            0x07: "findByTypeValueResponse", 0x08: "readByTypeRequest", 0x09: "readByTypeResponse",
            0x0A: "readRequest", 0x0B: "readResponse", 0x0C: "readBlobRequest", 0x0D: "readBlobResponse",
            0x0E: "readMultipleRequest", 0x0F: "readMultipleResponse", 0x10: "readByGroupTypeRequest",
            0x11: "readByGroupTypeResponse", 0x12: "writeRequest", 0x13: "writeResponse",
            0x16: "prepareWriteRequest", 0x17: "prepareWriteResponse", 0x18: "executeWriteRequest",
            0x19: "executeWriteResponse", 0x1B: "handleValueNotification", 0x1D: "handleValueIndication",
            0x1E: "handleValueConfirmation", 0x52: "writeCommand", 0xD2: "signedWriteCommand",
        ]
        return "\(names[rawValue] ?? "opcode") (0x\(String(rawValue, radix: 16)))"
    }
}
