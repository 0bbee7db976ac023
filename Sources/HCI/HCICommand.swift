import BluetoothWire

/// An HCI command the host can send, Core v5.4, Vol 4, Part E, 5.4.1 (packet) and 7 (commands).
///
/// Each command is a value with the spec's parameter names, one decoder and one encoder. The
/// decoder exists so tests (and a scripted controller) can check what the host sent.
public protocol HCICommand: Sendable, Equatable {
    /// What the Command Complete event returns for this command.
    associatedtype ReturnParameters: HCIReturnParameters = StatusReturnParameters

    /// The command's opcode.
    static var opcode: HCIOpcode { get }

    /// How the controller acknowledges the command: Command Complete (with return parameters)
    /// or Command Status (with the outcome reported later by another event).
    static var acknowledgement: HCICommandAcknowledgement { get }

    /// Reads the command's parameters (after the 3-octet header).
    init(parameters reader: inout ByteReader) throws(WireError)

    /// Writes the command's parameters (after the 3-octet header).
    func writeParameters(to writer: inout ByteWriter)
}

/// Which event acknowledges a command, Core v5.4, Vol 4, Part E, 4.4.
public enum HCICommandAcknowledgement: Sendable, Equatable {
    case commandComplete
    case commandStatus
}

extension HCICommand {
    public static var acknowledgement: HCICommandAcknowledgement { .commandComplete }

    /// The command packet without the H4 indicator: opcode, parameter length, parameters.
    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 3 + 32)
        writer.writeUInt16(Self.opcode.rawValue)
        writer.writeUInt8(0)
        writeParameters(to: &writer)
        writer.setUInt8(UInt8(truncatingIfNeeded: writer.count - 3), at: 2)
        return writer.bytes
    }

    /// The command as sent over H4: indicator 0x01, then ``encode()``.
    public func h4Bytes() -> [UInt8] {
        [HCIPacketType.command.rawValue] + encode()
    }

    /// Decodes a command packet (no H4 indicator), checking opcode, length and trailing bytes.
    public init(decoding packet: ArraySlice<UInt8>) throws(WireError) {
        var reader = ByteReader(packet)
        let opcode = try reader.readUInt16()
        guard opcode == Self.opcode.rawValue else {
            throw .invalidValue(field: "HCI command opcode", value: Int(opcode),
                                reason: "expected \(Self.opcode)")
        }
        let length = Int(try reader.readUInt8())
        guard length == reader.remainingCount else {
            throw .lengthMismatch(field: "Parameter_Total_Length", declared: length, actual: reader.remainingCount)
        }
        try self.init(parameters: &reader)
        try reader.expectEnd()
    }

    public init(decoding packet: [UInt8]) throws(WireError) {
        try self.init(decoding: packet[...])
    }
}

/// A command without parameters.
public protocol HCIParameterlessCommand: HCICommand {
    init()
}

extension HCIParameterlessCommand {
    public init(parameters reader: inout ByteReader) throws(WireError) {
        self.init()
    }

    public func writeParameters(to writer: inout ByteWriter) {}
}
