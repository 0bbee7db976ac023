import BluetoothWire

/// HCI_LE_Create_Connection, Core v5.4, Vol 4, Part E, 7.8.12. Acknowledged by Command Status;
/// the connection is reported by LE (Enhanced) Connection Complete.
///
/// With bumble's emulator use a random own address: a public one makes its LocalLink drop
/// every ACL packet from the central (`docs/bumble-test-peer.md`, 1).
public struct LECreateConnectionCommand: HCICommand {
    public static let opcode = HCIOpcode.leCreateConnection
    public static var acknowledgement: HCICommandAcknowledgement { .commandStatus }
    /// Units of 0.625 ms.
    public var leScanInterval: UInt16
    public var leScanWindow: UInt16
    /// 0x00: connect to the peer address below; 0x01: use the Filter Accept List.
    public var initiatorFilterPolicy: UInt8
    public var peerAddressType: BluetoothAddressType
    public var peerAddress: BluetoothAddress
    public var ownAddressType: BluetoothAddressType
    public var connectionParameters: LEConnectionParameterRange

    public init(leScanInterval: UInt16, leScanWindow: UInt16, initiatorFilterPolicy: UInt8 = 0,
                peerAddressType: BluetoothAddressType, peerAddress: BluetoothAddress,
                ownAddressType: BluetoothAddressType, connectionParameters: LEConnectionParameterRange) {
        self.leScanInterval = leScanInterval
        self.leScanWindow = leScanWindow
        self.initiatorFilterPolicy = initiatorFilterPolicy
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.ownAddressType = ownAddressType
        self.connectionParameters = connectionParameters
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        leScanInterval = try reader.readUInt16()
        leScanWindow = try reader.readUInt16()
        initiatorFilterPolicy = try reader.readUInt8()
        peerAddressType = BluetoothAddressType(rawValue: try reader.readUInt8())
        peerAddress = try BluetoothAddress(from: &reader)
        ownAddressType = BluetoothAddressType(rawValue: try reader.readUInt8())
        connectionParameters = try LEConnectionParameterRange(from: &reader)
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt16(leScanInterval)
        writer.writeUInt16(leScanWindow)
        writer.writeUInt8(initiatorFilterPolicy)
        writer.writeUInt8(peerAddressType.rawValue)
        peerAddress.write(to: &writer)
        writer.writeUInt8(ownAddressType.rawValue)
        connectionParameters.write(to: &writer)
    }
}
