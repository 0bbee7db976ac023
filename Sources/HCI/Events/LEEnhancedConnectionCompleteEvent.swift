import BluetoothWire

/// HCI_LE_Enhanced_Connection_Complete [v1] (subevent 0x0A), Core v5.4, Vol 4, Part E, 7.7.65.10:
/// the LE Connection Complete fields plus the resolvable private addresses in use.
public struct LEEnhancedConnectionCompleteEvent: HCIEventParameters {
    public var status: HCIStatus
    public var connectionHandle: UInt16
    public var role: LERole
    public var peerAddressType: BluetoothAddressType
    public var peerAddress: BluetoothAddress
    public var localResolvablePrivateAddress: BluetoothAddress
    public var peerResolvablePrivateAddress: BluetoothAddress
    /// Units of 1.25 ms.
    public var connectionInterval: UInt16
    public var peripheralLatency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16
    public var centralClockAccuracy: UInt8

    public init(status: HCIStatus, connectionHandle: UInt16, role: LERole, peerAddressType: BluetoothAddressType,
                peerAddress: BluetoothAddress, localResolvablePrivateAddress: BluetoothAddress = .zero,
                peerResolvablePrivateAddress: BluetoothAddress = .zero, connectionInterval: UInt16,
                peripheralLatency: UInt16, supervisionTimeout: UInt16, centralClockAccuracy: UInt8) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.role = role
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.localResolvablePrivateAddress = localResolvablePrivateAddress
        self.peerResolvablePrivateAddress = peerResolvablePrivateAddress
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
        self.centralClockAccuracy = centralClockAccuracy
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        status = HCIStatus(rawValue: try reader.readUInt8())
        connectionHandle = try reader.readUInt16()
        role = LERole(rawValue: try reader.readUInt8())
        peerAddressType = BluetoothAddressType(rawValue: try reader.readUInt8())
        peerAddress = try BluetoothAddress(from: &reader)
        localResolvablePrivateAddress = try BluetoothAddress(from: &reader)
        peerResolvablePrivateAddress = try BluetoothAddress(from: &reader)
        connectionInterval = try reader.readUInt16()
        peripheralLatency = try reader.readUInt16()
        supervisionTimeout = try reader.readUInt16()
        centralClockAccuracy = try reader.readUInt8()
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt8(status.rawValue)
        writer.writeUInt16(connectionHandle)
        writer.writeUInt8(role.rawValue)
        writer.writeUInt8(peerAddressType.rawValue)
        peerAddress.write(to: &writer)
        localResolvablePrivateAddress.write(to: &writer)
        peerResolvablePrivateAddress.write(to: &writer)
        writer.writeUInt16(connectionInterval)
        writer.writeUInt16(peripheralLatency)
        writer.writeUInt16(supervisionTimeout)
        writer.writeUInt8(centralClockAccuracy)
    }
}
