import BluetoothWire

/// ATT_ERROR_RSP, Core v5.4, Vol 3, Part F, 3.4.1.1.
public struct ErrorResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.errorResponse
    /// The opcode of the request that failed.
    public var requestOpcodeInError: ATTOpcode
    /// The handle that caused the error, or 0x0000 when none applies.
    public var attributeHandleInError: UInt16
    public var errorCode: ATTErrorCode

    public init(requestOpcodeInError: ATTOpcode, attributeHandleInError: UInt16, errorCode: ATTErrorCode) {
        self.requestOpcodeInError = requestOpcodeInError
        self.attributeHandleInError = attributeHandleInError
        self.errorCode = errorCode
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        requestOpcodeInError = ATTOpcode(rawValue: try reader.readUInt8())
        attributeHandleInError = try reader.readUInt16()
        errorCode = ATTErrorCode(rawValue: try reader.readUInt8())
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt8(requestOpcodeInError.rawValue)
        writer.writeUInt16(attributeHandleInError)
        writer.writeUInt8(errorCode.rawValue)
    }
}
