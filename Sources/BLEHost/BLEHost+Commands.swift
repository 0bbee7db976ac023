import BluetoothWire
import HCI

extension BLEHost {
    /// Sends `command` and returns the controller's response once it arrives; the deadline is
    /// the configuration's command timeout unless given.
    func send<Command: HCICommand>(_ command: Command, timeout: Duration? = nil) async throws(BLEHostError) -> CommandResponse {
        let timeout = timeout ?? configuration.commandTimeout
        let result: Result<CommandResponse, BLEHostError> = await withCheckedContinuation { continuation in
            enqueue(command, timeout: timeout) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Sends a command acknowledged by Command Complete and decodes its return parameters.
    func execute<Command: HCICommand>(_ command: Command, timeout: Duration? = nil) async throws(BLEHostError) -> Command.ReturnParameters {
        let response = try await send(command, timeout: timeout)
        switch response {
        case let .complete(event):
            do {
                return try event.returnParameters(for: Command.self)
            } catch let .commandFailed(opcode, status) {
                throw .commandFailed(opcode: opcode, status: status)
            } catch {
                throw .malformedResponse(opcode: Command.opcode, reason: "\(error)")
            }
        case let .status(event):
            // A Command Status for a Command Complete command is always a failure (e.g. 0x01).
            throw .commandFailed(opcode: Command.opcode, status: event.status.isSuccess ? .unspecifiedError : event.status)
        }
    }

    /// Sends a command acknowledged by Command Status; throws unless the status is success.
    func executeStatus<Command: HCICommand>(_ command: Command, timeout: Duration? = nil) async throws(BLEHostError) {
        let response = try await send(command, timeout: timeout)
        guard let status = response.status, status.isSuccess else {
            throw .commandFailed(opcode: Command.opcode, status: response.status ?? .unspecifiedError)
        }
    }

    /// Sends a command whose answer matters only for the log (replies, disconnects at stop).
    func sendCommandIgnoringResult<Command: HCICommand>(_ command: Command) {
        let logger = self.logger
        enqueue(command, timeout: configuration.commandTimeout) { result in
            switch result {
            case let .success(response):
                if let status = response.status, !status.isSuccess {
                    logger.warning("controller rejected command", metadata: ["opcode": "\(Command.opcode)", "status": "\(status)"])
                }
            case let .failure(error):
                logger.warning("command failed", metadata: ["opcode": "\(Command.opcode)", "error": "\(error)"])
            }
        }
    }

    func enqueue<Command: HCICommand>(_ command: Command, timeout: Duration,
                                      completion: @escaping @Sendable (Result<CommandResponse, BLEHostError>) -> Void) {
        guard state != .stopped, ioStarted else {
            completion(.failure(.notReady(state: state.rawValue)))
            return
        }
        let (token, actions) = commandFlow.enqueue(command, now: clock.now, timeout: timeout)
        commandWaiters[token] = completion
        perform(actions)
        if commandFlow.isWaiting(token) {
            // No credit now: the controller must grant one within the timeout too.
            after(timeout) { $0.withdrawIfStillWaiting(token, opcode: Command.opcode, after: timeout) }
        }
    }

    private func withdrawIfStillWaiting(_ token: CommandFlow<Clock.Instant>.Token, opcode: HCIOpcode, after: Duration) {
        guard commandFlow.withdraw(token) else { return }
        counters.commandTimeouts += 1
        logger.error("controller granted no command credit in time", metadata: ["opcode": "\(opcode)", "after": "\(after)"])
        commandWaiters.removeValue(forKey: token)?(.failure(.commandTimeout(opcode: opcode, after: after)))
    }

    /// Carries out what ``CommandFlow`` decided.
    func perform(_ actions: [CommandFlow<Clock.Instant>.Action]) {
        for action in actions {
            switch action {
            case let .send(_, packet):
                write(H4Packet(type: .command, bytes: packet[...]))
                scheduleCommandExpiry()
            case let .complete(token, response):
                commandWaiters.removeValue(forKey: token)?(.success(response))
            case let .fail(token, error):
                let failure: BLEHostError
                switch error {
                case let .timedOut(opcode, after):
                    counters.commandTimeouts += 1
                    logger.error("controller did not answer command", metadata: ["opcode": "\(opcode)", "after": "\(after)"])
                    failure = .commandTimeout(opcode: opcode, after: after)
                case .transportLost:
                    failure = .notReady(state: "transport lost")
                }
                commandWaiters.removeValue(forKey: token)?(.failure(failure))
            case let .unexpectedResponse(opcode):
                counters.unknown += 1
                logger.warning("response to no pending command (late after a timeout?)", metadata: ["opcode": "\(opcode)"])
            }
        }
    }

    /// Wakes the host at the earliest command deadline.
    private func scheduleCommandExpiry() {
        guard let deadline = commandFlow.nextDeadline else { return }
        after(max(.zero, clock.now.duration(to: deadline))) { $0.expireCommands() }
    }

    func expireCommands() {
        perform(commandFlow.expire(now: clock.now))
    }
}
