import BluetoothWire

/// ATT_READ_BY_TYPE_REQ, Core v5.4, Vol 3, Part F, 3.4.4.1 (characteristic discovery). The
/// attribute type is a 2- or 16-octet UUID, told apart by the PDU length.
public struct ReadByTypeRequest: ATTPDUParameters {
    public static let opcode = ATTOpcode.readByTypeRequest
    public var startingHandle: UInt16
    public var endingHandle: UInt16
    public var attributeType: BluetoothUUID

    public init(startingHandle: UInt16, endingHandle: UInt16, attributeType: BluetoothUUID) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeType = attributeType
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        startingHandle = try reader.readUInt16()
        endingHandle = try reader.readUInt16()
        attributeType = try BluetoothUUID(from: &reader, length: reader.remainingCount)
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt16(startingHandle)
        writer.writeUInt16(endingHandle)
        attributeType.write(to: &writer, format: attributeType.shortestWireFormat)
    }
}

/// ATT_READ_BY_TYPE_RSP, Core v5.4, Vol 3, Part F, 3.4.4.2: a length octet, then handle-value
/// pairs of that length (values all the same size); at least one pair.
public struct ReadByTypeResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.readByTypeResponse

    public struct AttributeData: Equatable, Sendable {
        public var handle: UInt16
        public var value: [UInt8]
        public init(handle: UInt16, value: [UInt8]) {
            self.handle = handle
            self.value = value
        }
    }

    /// It is a programmer error to encode values of different lengths or an empty list.
    public var attributeDataList: [AttributeData]

    public init(attributeDataList: [AttributeData]) {
        self.attributeDataList = attributeDataList
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        let length = Int(try reader.readUInt8())
        guard length >= 2 else {
            throw .invalidValue(field: "Read By Type Response Length", value: length, reason: "must be at least 2")
        }
        guard reader.remainingCount > 0, reader.remainingCount % length == 0 else {
            throw .invalidValue(field: "Read By Type Response data length", value: reader.remainingCount,
                                reason: "must be a non-zero multiple of \(length)")
        }
        attributeDataList = []
        while !reader.isAtEnd {
            let handle = try reader.readUInt16()
            attributeDataList.append(AttributeData(handle: handle, value: try reader.readBytes(length - 2)))
        }
    }

    public func writeParameters(to writer: inout ByteWriter) {
        let length = 2 + (attributeDataList.first?.value.count ?? 0)
        precondition(attributeDataList.allSatisfy { $0.value.count + 2 == length } && length <= 255,
                     "Read By Type Response values must share one length")
        writer.writeUInt8(UInt8(length))
        for item in attributeDataList {
            writer.writeUInt16(item.handle)
            writer.writeBytes(item.value)
        }
    }
}
