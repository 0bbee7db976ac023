import BluetoothWire

/// HCI_LE_Remote_Connection_Parameter_Request (subevent 0x06), Core v5.4, Vol 4, Part E,
/// 7.7.65.6: the peer's link layer asks for new parameters; answer with the Reply or Negative
/// Reply command.
public struct LERemoteConnectionParameterRequestEvent: HCIEventParameters {
    public var connectionHandle: UInt16
    /// Units of 1.25 ms.
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var maxLatency: UInt16
    /// Units of 10 ms.
    public var timeout: UInt16

    public init(connectionHandle: UInt16, intervalMin: UInt16, intervalMax: UInt16, maxLatency: UInt16,
                timeout: UInt16) {
        self.connectionHandle = connectionHandle
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.maxLatency = maxLatency
        self.timeout = timeout
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        connectionHandle = try reader.readUInt16()
        intervalMin = try reader.readUInt16()
        intervalMax = try reader.readUInt16()
        maxLatency = try reader.readUInt16()
        timeout = try reader.readUInt16()
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt16(connectionHandle)
        writer.writeUInt16(intervalMin)
        writer.writeUInt16(intervalMax)
        writer.writeUInt16(maxLatency)
        writer.writeUInt16(timeout)
    }
}
