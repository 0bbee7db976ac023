import BluetoothWire

/// PDUs whose parameters are an attribute handle followed by the rest of the PDU as its value
/// (Write Request and Command, Handle Value Notification and Indication): one codec for all.
public protocol HandleValueParameters: ATTPDUParameters {
    var attributeHandle: UInt16 { get }
    var attributeValue: [UInt8] { get }
    init(attributeHandle: UInt16, attributeValue: [UInt8])
}

extension HandleValueParameters {
    public init(parameters reader: inout ByteReader) throws(WireError) {
        let handle = try reader.readUInt16()
        self.init(attributeHandle: handle, attributeValue: reader.readRemainingBytes())
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt16(attributeHandle)
        writer.writeBytes(attributeValue)
    }
}
