import BluetoothWire

/// ATT_READ_BY_GROUP_TYPE_REQ, Core v5.4, Vol 3, Part F, 3.4.4.9 (primary service discovery).
public struct ReadByGroupTypeRequest: ATTPDUParameters {
    public static let opcode = ATTOpcode.readByGroupTypeRequest
    public var startingHandle: UInt16
    public var endingHandle: UInt16
    public var attributeGroupType: BluetoothUUID

    public init(startingHandle: UInt16, endingHandle: UInt16, attributeGroupType: BluetoothUUID) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeGroupType = attributeGroupType
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        startingHandle = try reader.readUInt16()
        endingHandle = try reader.readUInt16()
        attributeGroupType = try BluetoothUUID(from: &reader, length: reader.remainingCount)
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt16(startingHandle)
        writer.writeUInt16(endingHandle)
        attributeGroupType.write(to: &writer, format: attributeGroupType.shortestWireFormat)
    }
}

/// ATT_READ_BY_GROUP_TYPE_RSP, Core v5.4, Vol 3, Part F, 3.4.4.10: a length octet, then
/// (handle, end group handle, value) entries of that length; at least one.
public struct ReadByGroupTypeResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.readByGroupTypeResponse

    public struct AttributeData: Equatable, Sendable {
        public var attributeHandle: UInt16
        public var endGroupHandle: UInt16
        public var value: [UInt8]
        public init(attributeHandle: UInt16, endGroupHandle: UInt16, value: [UInt8]) {
            self.attributeHandle = attributeHandle
            self.endGroupHandle = endGroupHandle
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
        guard length >= 4 else {
            throw .invalidValue(field: "Read By Group Type Response Length", value: length, reason: "must be at least 4")
        }
        guard reader.remainingCount > 0, reader.remainingCount % length == 0 else {
            throw .invalidValue(field: "Read By Group Type Response data length", value: reader.remainingCount,
                                reason: "must be a non-zero multiple of \(length)")
        }
        attributeDataList = []
        while !reader.isAtEnd {
            let handle = try reader.readUInt16()
            let end = try reader.readUInt16()
            attributeDataList.append(AttributeData(attributeHandle: handle, endGroupHandle: end,
                                                   value: try reader.readBytes(length - 4)))
        }
    }

    public func writeParameters(to writer: inout ByteWriter) {
        let length = 4 + (attributeDataList.first?.value.count ?? 0)
        precondition(attributeDataList.allSatisfy { $0.value.count + 4 == length } && length <= 255,
                     "Read By Group Type Response values must share one length")
        writer.writeUInt8(UInt8(length))
        for item in attributeDataList {
            writer.writeUInt16(item.attributeHandle)
            writer.writeUInt16(item.endGroupHandle)
            writer.writeBytes(item.value)
        }
    }
}
