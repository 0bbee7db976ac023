import BluetoothWire

/// ATT_READ_BLOB_REQ, Core v5.4, Vol 3, Part F, 3.4.4.5: read a long value from an offset.
public struct ReadBlobRequest: ATTPDUParameters {
    public static let opcode = ATTOpcode.readBlobRequest
    public var attributeHandle: UInt16
    public var valueOffset: UInt16

    public init(attributeHandle: UInt16, valueOffset: UInt16) {
        self.attributeHandle = attributeHandle
        self.valueOffset = valueOffset
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        attributeHandle = try reader.readUInt16()
        valueOffset = try reader.readUInt16()
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt16(attributeHandle)
        writer.writeUInt16(valueOffset)
    }
}

/// ATT_READ_BLOB_RSP, Core v5.4, Vol 3, Part F, 3.4.4.6. A part shorter than ATT_MTU - 1 ends
/// the long read.
public struct ReadBlobResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.readBlobResponse
    public var partAttributeValue: [UInt8]

    public init(partAttributeValue: [UInt8]) {
        self.partAttributeValue = partAttributeValue
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        partAttributeValue = reader.readRemainingBytes()
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeBytes(partAttributeValue)
    }
}
