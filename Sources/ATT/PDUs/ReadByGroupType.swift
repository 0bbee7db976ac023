import BluetoothWire

/// ATT_READ_BY_GROUP_TYPE_REQ, Core v5.4, Vol 3, Part F, 3.4.4.9 (primary service discovery).
public struct ReadByGroupTypeRequest: HandleRangeTypeParameters {
    public static let opcode = ATTOpcode.readByGroupTypeRequest
    public var startingHandle: UInt16
    public var endingHandle: UInt16
    public var attributeGroupType: BluetoothUUID

    public init(startingHandle: UInt16, endingHandle: UInt16, attributeGroupType: BluetoothUUID) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeGroupType = attributeGroupType
    }

    public init(startingHandle: UInt16, endingHandle: UInt16, type: BluetoothUUID) {
        self.init(startingHandle: startingHandle, endingHandle: endingHandle, attributeGroupType: type)
    }

    public var type: BluetoothUUID { attributeGroupType }
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
        let length = try reader.readEntryLength(minimum: 4, pdu: "Read By Group Type Response")
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
