import BluetoothWire

/// The parameters of one ATT PDU (everything after the opcode), Core v5.4, Vol 3, Part F, 3.3.
/// One decoder and one encoder per PDU, spec field names.
public protocol ATTPDUParameters: Sendable, Equatable {
    static var opcode: ATTOpcode { get }

    /// Reads the parameters; ``ATTPDU/init(decoding:)-(ArraySlice<UInt8>)`` checks that nothing is left over.
    init(parameters reader: inout ByteReader) throws(WireError)

    func writeParameters(to writer: inout ByteWriter)
}

extension ATTPDUParameters {
    /// The PDU's bytes: opcode then parameters (the L2CAP payload on CID 0x0004).
    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 24)
        writer.writeUInt8(Self.opcode.rawValue)
        writeParameters(to: &writer)
        return writer.bytes
    }
}
