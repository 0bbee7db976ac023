/// HCI command flow control as a pure state machine, Core v5.4, Vol 4, Part E, 4.4.
///
/// Design overview: the controller grants command credits in every Command Complete and Command
/// Status (`Num_HCI_Command_Packets`); the host starts with one. Commands wait in a FIFO until a
/// credit is free, then become *pending* with a deadline. A response resolves the oldest pending
/// command with its opcode. Time is passed in, never read, and nothing here sleeps or does I/O:
/// every method returns ``Action``s for the owner (the `BLEHost` actor) to perform, so the
/// rules are tested without a controller (as NIO's upgrader state machine is).
///
/// Every pending command has a deadline because some controllers never answer: bumble's emulator
/// ignores unknown opcodes and some unimplemented commands (`docs/bumble-test-peer.md`, 2). When a
/// deadline passes, the command fails with ``CommandFlowError/timedOut(opcode:after:)`` and its
/// credit is given back: otherwise one silent controller bug would stall the host forever. The
/// cost is that a very late response then shows up as ``Action/unexpectedResponse(_:)``.
public struct CommandFlow<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// Identifies one enqueued command in the actions that concern it.
    public struct Token: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt64
        public var description: String { "command#\(rawValue)" }
    }

    /// What the owner must do.
    public enum Action: Equatable, Sendable {
        /// Write this command packet (no H4 indicator) to the transport.
        case send(Token, packet: [UInt8])
        /// The controller answered the command.
        case complete(Token, CommandResponse)
        /// The command will never be answered.
        case fail(Token, CommandFlowError)
        /// A response matched no pending command (late after a timeout, or a controller bug): log it.
        case unexpectedResponse(HCIOpcode)
    }

    private struct Waiting: Sendable {
        var token: Token
        var opcode: HCIOpcode
        var packet: [UInt8]
        var timeout: Duration
    }

    private struct Pending: Sendable {
        var token: Token
        var opcode: HCIOpcode
        var deadline: Instant
        var timeout: Duration
    }

    /// Commands the controller will accept now.
    public private(set) var credits: Int = 1
    private var waiting: [Waiting] = []
    private var pending: [Pending] = []
    private var nextToken: UInt64 = 0

    public init() {}

    /// Commands sent and not yet answered.
    public var pendingCount: Int { pending.count }
    /// Commands waiting for a credit.
    public var waitingCount: Int { waiting.count }
    /// The earliest deadline among pending commands: when to call ``expire(now:)`` next.
    public var nextDeadline: Instant? { pending.map(\.deadline).min() }

    /// Queues `command`; it is sent at once if a credit is free. The timeout runs from sending.
    public mutating func enqueue<Command: HCICommand>(_ command: Command, now: Instant,
                                                      timeout: Duration = .seconds(2)) -> (Token, [Action]) {
        enqueue(opcode: Command.opcode, packet: command.encode(), now: now, timeout: timeout)
    }

    /// Queues an already encoded command packet (no H4 indicator).
    public mutating func enqueue(opcode: HCIOpcode, packet: [UInt8], now: Instant,
                                 timeout: Duration) -> (Token, [Action]) {
        nextToken += 1
        let token = Token(rawValue: nextToken)
        waiting.append(Waiting(token: token, opcode: opcode, packet: packet, timeout: timeout))
        return (token, sendWaiting(now: now))
    }

    /// Handles a Command Complete or Command Status event; other events return no actions.
    public mutating func receive(_ event: HCIEvent, now: Instant) -> [Action] {
        let response: CommandResponse
        let granted: UInt8
        switch event {
        case let .commandComplete(complete):
            response = .complete(complete)
            granted = complete.numHCICommandPackets
        case let .commandStatus(status):
            response = .status(status)
            granted = status.numHCICommandPackets
        default:
            return []
        }
        credits = Int(granted)
        var actions: [Action] = []
        if response.opcode != .noOperation {
            if let index = pending.firstIndex(where: { $0.opcode == response.opcode }) {
                actions.append(.complete(pending.remove(at: index).token, response))
            } else {
                actions.append(.unexpectedResponse(response.opcode))
            }
        }
        return actions + sendWaiting(now: now)
    }

    /// Fails every pending command whose deadline is at or before `now`.
    public mutating func expire(now: Instant) -> [Action] {
        var actions: [Action] = []
        pending.removeAll { entry in
            guard entry.deadline <= now else { return false }
            actions.append(.fail(entry.token, .timedOut(opcode: entry.opcode, after: entry.timeout)))
            credits += 1  // see the design note: assume the controller lost it
            return true
        }
        return actions + sendWaiting(now: now)
    }

    /// Withdraws a command that is still waiting for a credit (a controller that granted zero
    /// credits and never grants more would otherwise hold it forever). Returns `false`, and
    /// changes nothing, when the command was already sent or resolved.
    public mutating func withdraw(_ token: Token) -> Bool {
        guard let index = waiting.firstIndex(where: { $0.token == token }) else { return false }
        waiting.remove(at: index)
        return true
    }

    /// Whether `token` is still waiting for a credit (not yet sent).
    public func isWaiting(_ token: Token) -> Bool {
        waiting.contains { $0.token == token }
    }

    /// Fails everything (transport closed or controller reset by force) and starts over with one credit.
    public mutating func transportLost() -> [Action] {
        let failed = pending.map { Action.fail($0.token, .transportLost(opcode: $0.opcode)) }
            + waiting.map { Action.fail($0.token, .transportLost(opcode: $0.opcode)) }
        pending = []
        waiting = []
        credits = 1
        return failed
    }

    private mutating func sendWaiting(now: Instant) -> [Action] {
        var actions: [Action] = []
        while credits > 0, !waiting.isEmpty {
            let next = waiting.removeFirst()
            credits -= 1
            pending.append(Pending(token: next.token, opcode: next.opcode, deadline: now.advanced(by: next.timeout),
                                   timeout: next.timeout))
            actions.append(.send(next.token, packet: next.packet))
        }
        return actions
    }
}
