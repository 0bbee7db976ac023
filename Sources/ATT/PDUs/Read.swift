import BluetoothWire

/// ATT_READ_REQ, Core v5.4, Vol 3, Part F, 3.4.4.3.
public struct ReadRequest: ATTPDUParameters {
    public static let opcode = ATTOpcode.readRequest
    public var attributeHandle: UInt16

    public init(attributeHandle: UInt16) {
        self.attributeHandle = attributeHandle
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        attributeHandle = try reader.readUInt16()
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt16(attributeHandle)
    }
}

/// ATT_READ_RSP, Core v5.4, Vol 3, Part F, 3.4.4.4: up to ATT_MTU - 1 octets of the value.
public struct ReadResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.readResponse
    public var attributeValue: [UInt8]

    public init(attributeValue: [UInt8]) {
        self.attributeValue = attributeValue
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        attributeValue = reader.readRemainingBytes()
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeBytes(attributeValue)
    }
}
