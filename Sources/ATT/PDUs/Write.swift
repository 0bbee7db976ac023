import BluetoothWire

/// ATT_WRITE_REQ, Core v5.4, Vol 3, Part F, 3.4.5.1 (e.g. enabling notifications in a CCCD).
public struct WriteRequest: HandleValueParameters {
    public static let opcode = ATTOpcode.writeRequest
    public var attributeHandle: UInt16
    public var attributeValue: [UInt8]

    public init(attributeHandle: UInt16, attributeValue: [UInt8]) {
        self.attributeHandle = attributeHandle
        self.attributeValue = attributeValue
    }
}

/// ATT_WRITE_RSP, Core v5.4, Vol 3, Part F, 3.4.5.2. No parameters.
public struct WriteResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.writeResponse

    public init() {}

    public init(parameters reader: inout ByteReader) throws(WireError) {}

    public func writeParameters(to writer: inout ByteWriter) {}
}

/// ATT_WRITE_CMD, Core v5.4, Vol 3, Part F, 3.4.5.3: a write without response. MetaWear
/// commands travel this way.
public struct WriteCommand: HandleValueParameters {
    public static let opcode = ATTOpcode.writeCommand
    public var attributeHandle: UInt16
    public var attributeValue: [UInt8]

    public init(attributeHandle: UInt16, attributeValue: [UInt8]) {
        self.attributeHandle = attributeHandle
        self.attributeValue = attributeValue
    }
}
