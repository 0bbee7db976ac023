/// The controller's answer to a command: Command Complete with return parameters, or Command
/// Status (Core v5.4, Vol 4, Part E, 7.7.14 and 7.7.15).
public enum CommandResponse: Equatable, Sendable {
    case complete(CommandCompleteEvent)
    case status(CommandStatusEvent)

    public var opcode: HCIOpcode {
        switch self {
        case let .complete(event): return event.commandOpcode
        case let .status(event): return event.commandOpcode
        }
    }

    /// The command's status: Command Status's own, or the first return parameter.
    public var status: HCIStatus? {
        switch self {
        case let .complete(event): return event.status
        case let .status(event): return event.status
        }
    }
}

/// Why a command will never be answered.
public enum CommandFlowError: Error, Equatable, Sendable {
    /// No Command Complete or Status arrived in time: the controller ignored the command (bumble
    /// does for unknown opcodes) or lost it.
    case timedOut(opcode: HCIOpcode, after: Duration)
    /// The transport closed before an answer.
    case transportLost(opcode: HCIOpcode)
}

extension CommandFlowError: CustomStringConvertible {
    public var description: String {
        switch self {
        case let .timedOut(opcode, after):
            return "controller did not answer \(opcode) within \(after)"
        case let .transportLost(opcode):
            return "transport closed before the controller answered \(opcode)"
        }
    }
}
