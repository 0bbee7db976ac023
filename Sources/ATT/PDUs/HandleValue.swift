import BluetoothWire

/// ATT_HANDLE_VALUE_NTF, Core v5.4, Vol 3, Part F, 3.4.7.1: an unacknowledged value update
/// (MetaWear sensor data arrives this way).
public struct HandleValueNotification: HandleValueParameters {
    public static let opcode = ATTOpcode.handleValueNotification
    public var attributeHandle: UInt16
    public var attributeValue: [UInt8]

    public init(attributeHandle: UInt16, attributeValue: [UInt8]) {
        self.attributeHandle = attributeHandle
        self.attributeValue = attributeValue
    }
}

/// ATT_HANDLE_VALUE_IND, Core v5.4, Vol 3, Part F, 3.4.7.2: a value update the client must
/// confirm with ``HandleValueConfirmation`` before the server sends another.
public struct HandleValueIndication: HandleValueParameters {
    public static let opcode = ATTOpcode.handleValueIndication
    public var attributeHandle: UInt16
    public var attributeValue: [UInt8]

    public init(attributeHandle: UInt16, attributeValue: [UInt8]) {
        self.attributeHandle = attributeHandle
        self.attributeValue = attributeValue
    }
}

/// ATT_HANDLE_VALUE_CFM, Core v5.4, Vol 3, Part F, 3.4.7.3. No parameters.
public struct HandleValueConfirmation: ATTPDUParameters {
    public static let opcode = ATTOpcode.handleValueConfirmation

    public init() {}

    public init(parameters reader: inout ByteReader) throws(WireError) {}

    public func writeParameters(to writer: inout ByteWriter) {}
}
