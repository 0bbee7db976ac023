import BluetoothWire

/// HCI_LE_Connection_Update_Complete (subevent 0x03), Core v5.4, Vol 4, Part E, 7.7.65.3.
public struct LEConnectionUpdateCompleteEvent: HCIEventParameters {
    public var status: HCIStatus
    public var connectionHandle: UInt16
    /// Units of 1.25 ms.
    public var connectionInterval: UInt16
    public var peripheralLatency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16

    public init(status: HCIStatus, connectionHandle: UInt16, connectionInterval: UInt16,
                peripheralLatency: UInt16, supervisionTimeout: UInt16) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        status = HCIStatus(rawValue: try reader.readUInt8())
        connectionHandle = try reader.readUInt16()
        connectionInterval = try reader.readUInt16()
        peripheralLatency = try reader.readUInt16()
        supervisionTimeout = try reader.readUInt16()
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt8(status.rawValue)
        writer.writeUInt16(connectionHandle)
        writer.writeUInt16(connectionInterval)
        writer.writeUInt16(peripheralLatency)
        writer.writeUInt16(supervisionTimeout)
    }
}
