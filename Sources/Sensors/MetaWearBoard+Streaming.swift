import BLEHost
import Logging
import MetaWear

extension MetaWearBoard {
    /// Configures and starts the planned streams, then button, connection interval and LED.
    public func startStreaming() async throws {
        guard let plan else { throw BoardError.timeout("start before initialise") }
        if let backfill = options.backfill, info.isPresent(.logging) { try await startLogging(plan, backfill) }
        phase = .streaming
        step = "writing the stream's start"
        var commands = plan.startCommands
        if plan.gyro.boardTime {
            // The gyro's configuration first (written while it is stopped), then its accounter.
            try await link.write(commands.removeFirst())
            try await subscribeTimedGyro(plan.gyro)
        }
        for command in commands { try await link.write(command) }
        if plan.wantsShortInterval {
            step = "a shorter connection interval"
            await link.requestConnectionInterval(minimumMilliseconds: 7.5, maximumMilliseconds: 15)
        }
        streaming = true
    }

    /// Stops the streams in reverse order, then waits (up to the response timeout, at most
    /// 1 s: this runs while the gateway shuts down) for an answer from the board. The link is in order, so the answer means the board has carried
    /// out the stop commands before the caller disconnects: a MetaWear keeps streaming without
    /// a connection, and a stop overtaken by the disconnect would leave it streaming (and
    /// draining its battery) until the next connection resets it. Data in flight (a paced loop
    /// may have left a batch unread) arrives before the answer and is still passed on.
    public func stopStreaming() async throws {
        guard let plan else { return }
        streaming = false
        defer { phase = .quiet }
        for command in plan.stopCommands { try await link.write(command) }
        for id in [gyroAccounter, gyroPacker].compactMap({ $0 }) { try await link.write(DataProcessor.remove(id: id)) }
        _ = try await request(Gyro.readConfiguration(), answer: MetaWearModuleID.gyro.rawValue, 0x83,
                              what: "gyro configuration read after the stop", timeout: min(responseTimeout, .seconds(1)))
    }

    /// Creates the gyro's time accounter (after a packer of 2 when the plan packs) and subscribes
    /// to its output; a board that does not answer streams the raw signal instead, one sample per
    /// notification, stamped on arrival.
    private func subscribeTimedGyro(_ stream: StreamingPlan.Stream) async throws {
        guard let registers = info.gyroRegisters else { return }
        if stream.processorPacked {
            gyroPacker = await createProcessor(DataProcessor.createPacker(module: .gyro, register: registers.data, count: 2),
                                               what: "packer creation")
        }
        if !stream.processorPacked || gyroPacker != nil {
            let create = gyroPacker.map { DataProcessor.createTimeAccounter(packer: $0) }
                ?? DataProcessor.createTimeAccounter(module: .gyro, register: registers.data)
            gyroAccounter = await createProcessor(create, what: "time accounter creation")
        }
        if let gyroAccounter {
            for command in DataProcessor.subscribe(id: gyroAccounter) { try await link.write(command) }
        } else {
            if closed { throw BoardError.linkClosed }
            logger.warning("the board made no time accounter: gyro samples are stamped on arrival",
                           metadata: ["subsystem": "sensor"])
            try await link.write(try Gyro.subscribe(registers))
        }
    }

    /// The new processor's id, or nil when the board did not answer.
    private func createProcessor(_ command: MetaWearCommand, what: String) async -> UInt8? {
        guard let answer = try? await request(command, answer: MetaWearModuleID.dataProcessor.rawValue, 0x02, what: what),
              case .processorCreated(let id) = try? parser.parse(answer) else { return nil }
        return id
    }
}
