import BluetoothWire

/// HCI_LE_Connection_Complete (subevent 0x01), Core v5.4, Vol 4, Part E, 7.7.65.1.
///
/// bumble's emulator sends this one even after LE Extended Create Connection
/// (`docs/bumble-test-peer.md`, 9), so a host must accept either this or the enhanced form.
public struct LEConnectionCompleteEvent: HCIEventParameters {
    public var status: HCIStatus
    public var connectionHandle: UInt16
    public var role: LERole
    public var peerAddressType: BluetoothAddressType
    public var peerAddress: BluetoothAddress
    /// Units of 1.25 ms.
    public var connectionInterval: UInt16
    public var peripheralLatency: UInt16
    /// Units of 10 ms.
    public var supervisionTimeout: UInt16
    public var centralClockAccuracy: UInt8

    public init(status: HCIStatus, connectionHandle: UInt16, role: LERole, peerAddressType: BluetoothAddressType,
                peerAddress: BluetoothAddress, connectionInterval: UInt16, peripheralLatency: UInt16,
                supervisionTimeout: UInt16, centralClockAccuracy: UInt8) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.role = role
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
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
        writer.writeUInt16(connectionInterval)
        writer.writeUInt16(peripheralLatency)
        writer.writeUInt16(supervisionTimeout)
        writer.writeUInt8(centralClockAccuracy)
    }
}

/// The local device's role on a connection. An open set over the raw octet.
public struct LERole: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let central = LERole(rawValue: 0x00)
    public static let peripheral = LERole(rawValue: 0x01)
}
