import BluetoothWire

/// HCI_Command_Complete (0x0E), Core v5.4, Vol 4, Part E, 7.7.14.
///
/// The return parameters stay raw because their layout depends on the opcode; decode them with
/// ``returnParameters(for:)`` once the pending command is known.
public struct CommandCompleteEvent: HCIEventParameters {
    /// How many commands the host may now send (its command credits).
    public var numHCICommandPackets: UInt8
    public var commandOpcode: HCIOpcode
    public var returnParameters: [UInt8]

    public init(numHCICommandPackets: UInt8, commandOpcode: HCIOpcode, returnParameters: [UInt8]) {
        self.numHCICommandPackets = numHCICommandPackets
        self.commandOpcode = commandOpcode
        self.returnParameters = returnParameters
    }

    public init(parameters reader: inout ByteReader) throws(WireError) {
        numHCICommandPackets = try reader.readUInt8()
        commandOpcode = HCIOpcode(rawValue: try reader.readUInt16())
        returnParameters = reader.readRemainingBytes()
    }

    public func writeParameters(to writer: inout ByteWriter) {
        writer.writeUInt8(numHCICommandPackets)
        writer.writeUInt16(commandOpcode.rawValue)
        writer.writeBytes(returnParameters)
    }

    /// The first return parameter, which is the status for every command this host sends;
    /// `nil` for the no-operation opcode's empty return parameters.
    public var status: HCIStatus? {
        returnParameters.first.map(HCIStatus.init(rawValue:))
    }

    /// Decodes the return parameters of `command`.
    ///
    /// - throws: ``HCICommandError/opcodeMismatch(expected:received:)`` if this event completes
    ///   another opcode, ``HCICommandError/commandFailed(opcode:status:)`` when the status is not
    ///   success, and ``HCICommandError/malformedReturnParameters(opcode:_:)`` when the bytes do
    ///   not fit the layout (extra trailing octets are tolerated for forward compatibility).
    public func returnParameters<Command: HCICommand>(
        for command: Command.Type
    ) throws(HCICommandError) -> Command.ReturnParameters {
        guard commandOpcode == Command.opcode else {
            throw .opcodeMismatch(expected: Command.opcode, received: commandOpcode)
        }
        guard let status else {
            throw .malformedReturnParameters(opcode: commandOpcode, .truncated(needed: 1, available: 0, offset: 0))
        }
        guard status.isSuccess else { throw .commandFailed(opcode: commandOpcode, status: status) }
        var reader = ByteReader(returnParameters)
        do {
            return try Command.ReturnParameters(returnParameters: &reader)
        } catch {
            throw .malformedReturnParameters(opcode: commandOpcode, error)
        }
    }
}
