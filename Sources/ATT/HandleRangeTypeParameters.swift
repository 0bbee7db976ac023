import BluetoothWire

/// Requests whose parameters are a handle range and an attribute type, a 2- or 16-octet UUID
/// told apart by the PDU length (Read By Type and Read By Group Type): one codec for both.
public protocol HandleRangeTypeParameters: ATTPDUParameters {
    var startingHandle: UInt16 { get }
    var endingHandle: UInt16 { get }
    /// The spec's Attribute Type, or Attribute Group Type.
    var type: BluetoothUUID { get }
    init(startingHandle: UInt16, endingHandle: UInt16, type: BluetoothUUID)
}

extension HandleRangeTypeParameters {
    public init(parameters reader: inout ByteReader) throws(WireError) {
        let start = try reader.readUInt16()
        let end = try reader.readUInt16()
        self.init(startingHandle: start, endingHandle: end, type: try BluetoothUUID(from: &reader, length: reader.remainingCount))
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt16(startingHandle)
        writer.writeUInt16(endingHandle)
        type.write(to: &writer, format: type.shortestWireFormat)
    }
}

extension ByteReader {
    /// The list in a Read By Type or Read By Group Type Response: a length octet, then entries
    /// of that length filling the rest of the PDU, at least one. Returns the entry length.
    mutating func readEntryLength(minimum: Int, pdu: String) throws(WireError) -> Int {
        let length = Int(try readUInt8())
        guard length >= minimum else {
            throw .invalidValue(field: "\(pdu) Length", value: length, reason: "must be at least \(minimum)")
        }
        guard remainingCount > 0, remainingCount % length == 0 else {
            throw .invalidValue(field: "\(pdu) data length", value: remainingCount, reason: "must be a non-zero multiple of \(length)")
        }
        return length
    }
}
