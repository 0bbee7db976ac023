import BluetoothWire

/// HCI_Read_BD_ADDR, Core v5.4, Vol 4, Part E, 7.4.6: the controller's public address.
public struct ReadBDADDRCommand: HCIParameterlessCommand {
    public typealias ReturnParameters = ReadBDADDRReturnParameters
    public static let opcode = HCIOpcode.readBDADDR
    public init() {}
}

public struct ReadBDADDRReturnParameters: HCIReturnParameters {
    public var status: HCIStatus
    public var bdAddr: BluetoothAddress

    public init(status: HCIStatus, bdAddr: BluetoothAddress) {
        self.status = status
        self.bdAddr = bdAddr
    }

    public init(returnParameters reader: inout ByteReader) throws(WireError) {
        status = HCIStatus(rawValue: try reader.readUInt8())
        bdAddr = try BluetoothAddress(from: &reader)
    }

    public func write(to writer: inout ByteWriter) {
        writer.writeUInt8(status.rawValue)
        bdAddr.write(to: &writer)
    }
}
