import BluetoothWire

/// HCI_Read_Buffer_Size, Core v5.4, Vol 4, Part E, 7.4.5: the BR/EDR (shared) ACL buffers,
/// used for LE when LE Read Buffer Size reports zero.
public struct ReadBufferSizeCommand: HCIParameterlessCommand {
    public typealias ReturnParameters = ReadBufferSizeReturnParameters
    public static let opcode = HCIOpcode.readBufferSize
    public init() {}
}

public struct ReadBufferSizeReturnParameters: HCIReturnParameters {
    public var status: HCIStatus
    public var aclDataPacketLength: UInt16
    public var synchronousDataPacketLength: UInt8
    public var totalNumACLDataPackets: UInt16
    public var totalNumSynchronousDataPackets: UInt16

    public init(status: HCIStatus, aclDataPacketLength: UInt16, synchronousDataPacketLength: UInt8,
                totalNumACLDataPackets: UInt16, totalNumSynchronousDataPackets: UInt16) {
        self.status = status
        self.aclDataPacketLength = aclDataPacketLength
        self.synchronousDataPacketLength = synchronousDataPacketLength
        self.totalNumACLDataPackets = totalNumACLDataPackets
        self.totalNumSynchronousDataPackets = totalNumSynchronousDataPackets
    }

    public init(returnParameters reader: inout ByteReader) throws(WireError) {
        status = HCIStatus(rawValue: try reader.readUInt8())
        aclDataPacketLength = try reader.readUInt16()
        synchronousDataPacketLength = try reader.readUInt8()
        totalNumACLDataPackets = try reader.readUInt16()
        totalNumSynchronousDataPackets = try reader.readUInt16()
    }

    public func write(to writer: inout ByteWriter) {
        writer.writeUInt8(status.rawValue)
        writer.writeUInt16(aclDataPacketLength)
        writer.writeUInt8(synchronousDataPacketLength)
        writer.writeUInt16(totalNumACLDataPackets)
        writer.writeUInt16(totalNumSynchronousDataPackets)
    }
}
