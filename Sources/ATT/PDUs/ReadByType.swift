import BluetoothWire

/// ATT_READ_BY_TYPE_REQ, Core v5.4, Vol 3, Part F, 3.4.4.1 (characteristic discovery). The
/// attribute type is a 2- or 16-octet UUID, told apart by the PDU length.
public struct ReadByTypeRequest: HandleRangeTypeParameters {
    public static let opcode = ATTOpcode.readByTypeRequest
    public var startingHandle: UInt16
    public var endingHandle: UInt16
    public var attributeType: BluetoothUUID

    public init(startingHandle: UInt16, endingHandle: UInt16, attributeType: BluetoothUUID) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeType = attributeType
    }

    public init(startingHandle: UInt16, endingHandle: UInt16, type: BluetoothUUID) {
        self.init(startingHandle: startingHandle, endingHandle: endingHandle, attributeType: type)
    }

    public var type: BluetoothUUID { attributeType }
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
        let length = try reader.readEntryLength(minimum: 2, pdu: "Read By Type Response")
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
