import BluetoothWire

/// Why a command's result could not be used. Each case names the opcode and the party at fault.
public enum HCICommandError: Error, Equatable, Sendable {
    /// The controller completed a different command than the one asked about (a controller
    /// bug, or the host matched events to commands wrongly).
    case opcodeMismatch(expected: HCIOpcode, received: HCIOpcode)
    /// The controller rejected or failed the command.
    case commandFailed(opcode: HCIOpcode, status: HCIStatus)
    /// The controller's return parameters do not match the spec layout.
    case malformedReturnParameters(opcode: HCIOpcode, WireError)
}

extension HCICommandError: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .opcodeMismatch(expected, received):
            return "controller completed \(received) while \(expected) was awaited"
        case let .commandFailed(opcode, status):
            return "controller failed \(opcode) with \(status)"
        case let .malformedReturnParameters(opcode, error):
            return "controller sent malformed return parameters for \(opcode): \(error)"
        }
    }
}
