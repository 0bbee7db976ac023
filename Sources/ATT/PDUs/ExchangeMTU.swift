import BluetoothWire

/// ATT_EXCHANGE_MTU_REQ, Core v5.4, Vol 3, Part F, 3.4.2.1. The client's receive MTU (>= 23).
public struct ExchangeMTURequest: ATTPDUParameters {
    public static let opcode = ATTOpcode.exchangeMTURequest
    public var clientRxMTU: UInt16

    public init(clientRxMTU: UInt16) {
        self.clientRxMTU = clientRxMTU
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        clientRxMTU = try reader.readUInt16()
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt16(clientRxMTU)
    }
}

/// ATT_EXCHANGE_MTU_RSP, Core v5.4, Vol 3, Part F, 3.4.2.2. The ATT_MTU becomes the smaller of
/// the two receive MTUs (and never below 23).
public struct ExchangeMTUResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.exchangeMTUResponse
    public var serverRxMTU: UInt16

    public init(serverRxMTU: UInt16) {
        self.serverRxMTU = serverRxMTU
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        serverRxMTU = try reader.readUInt16()
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt16(serverRxMTU)
    }
}
