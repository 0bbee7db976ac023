import MetaWear

/// The command sequences the gateway writes to a discovered board, as values: what
/// ``MetaWearBoard`` sends, and what the byte-vector tests check.
///
/// Order on every (re)initialisation, after discovery:
/// 1. `BoardResetSequence` (stop sensors, unsubscribe, remove loggers, processors and events);
/// 2. a read of the gyro configuration (`13 83`) used as a barrier: notifications are delivered in
///    order, so anything that arrives before its answer was produced before the reset and is ignored;
/// 3. per stream: configure (`13 03 …`, `03 03 …`), then the SDK start order (subscribe, enable
///    interrupt, power on), gyro first;
/// 4. optional: button subscribe, `11 09` short connection interval, LED blink.
/// Stopping runs the SDK stop order per stream, accelerometer first (the reverse of the start).
public struct StreamingPlan: Sendable, Equatable {
    public struct Stream: Sendable, Equatable {
        public var module: MetaWearModuleID
        public var odrHz: Double
        /// Full-scale range in °/s or g (what the store records).
        public var range: Double
        /// Through the packed register: 3 samples per notification, stamped on arrival.
        public var packed: Bool
        /// Through a packer of 2 chained to the time accounter: 2 samples per notification, with
        /// board time (``boardTime`` is set too).
        public var processorPacked: Bool
        /// Whether samples come through a time accounter (`09 03 <id> <tick> <sample>`) and are
        /// stamped from the board's clock rather than from their arrival. `start` then holds no
        /// subscription: the board creates the accounter and subscribes to its output first.
        public var boardTime: Bool
        public var decoder: SampleDecoder
        public var configure: MetaWearCommand
        public var start: [MetaWearCommand]
        public var stop: [MetaWearCommand]

        /// Samples per notification.
        public var samplesPerNotification: Int { packed ? 3 : processorPacked ? 2 : 1 }
        public var notificationsPerSecond: Double { odrHz / Double(samplesPerNotification) }
    }

    public var reset: [MetaWearCommand]
    public var gyro: Stream
    public var accelerometer: Stream?
    /// Written after the streams start: button subscribe, connection parameters, LED.
    public var afterStart: [MetaWearCommand]
    /// Whether the rate asks for a short connection interval.
    public var wantsShortInterval: Bool

    public enum PlanError: Error, Equatable, CustomStringConvertible {
        case noGyro(model: MetaWearModel)
        case unsupported(String)
        public var description: String {
            switch self {
            case .noGyro(let model): "the board (\(model.rawValue)) has no gyro of a known chip"
            case .unsupported(let why): why
            }
        }
    }

    public init(board: BoardInfo, options: BoardOptions) throws(PlanError) {
        guard let gyroRegisters = board.gyroRegisters else { throw .noGyro(model: board.model) }
        reset = BoardResetSequence.commands(for: board)
        let gyroHz = options.gyro.outputDataRate.hertz
        // Board time needs a data processor for the accounter and the log clock (read at each
        // initialisation) for its ticks. The accounter cannot take the packed register's 18-byte
        // samples (protocol reference, section 8), so a rate that wants packing gets a packer of 2
        // before it, up to 400 Hz (200 notifications/s); above that, the packed register's 3 per
        // notification, stamped on arrival.
        let boardClock = options.boardTime && board.isPresent(.dataProcessor) && board.isPresent(.logging)
        let wantsPacking = options.usesPacked(gyroHz)
        let gyroProcessorPacked = wantsPacking && boardClock && gyroHz <= 400
        let gyroPacked = wantsPacking && !gyroProcessorPacked && gyroRegisters.packedData != nil
        let gyroBoardTime = boardClock && !gyroPacked
        do {
            var start = try Gyro.startStreaming(gyroRegisters, packed: gyroPacked)
            if gyroBoardTime { start.removeFirst() }  // the raw subscription
            gyro = Stream(module: .gyro, odrHz: gyroHz, range: options.gyro.range.degreesPerSecond, packed: gyroPacked,
                          processorPacked: gyroProcessorPacked, boardTime: gyroBoardTime, decoder: SampleDecoder(gyroRange: options.gyro.range),
                          configure: Gyro.configure(options.gyro), start: start,
                          stop: try Gyro.stopStreaming(gyroRegisters, packed: gyroPacked))
            if let acc = options.accelerometer {
                guard let registers = board.accelerometerRegisters else {
                    throw MetaWearCommandError.packedDataUnsupported(module: .accelerometer, chip: .bmi160, revision: 0)
                }
                let hz = acc.outputDataRate.hertz
                let packed = options.usesPacked(hz) && registers.packedData != nil
                accelerometer = Stream(module: .accelerometer, odrHz: hz, range: acc.range.gravities, packed: packed,
                                       processorPacked: false, boardTime: false, decoder: SampleDecoder(accelerometerRange: acc.range),
                                       configure: Accelerometer.configure(acc, chip: registers.chip),
                                       start: try Accelerometer.startStreaming(registers, configuration: acc, packed: packed),
                                       stop: try Accelerometer.stopStreaming(registers, packed: packed))
            } else {
                accelerometer = nil
            }
        } catch {
            throw .unsupported("\(error)")
        }
        let rate = gyro.notificationsPerSecond + (accelerometer?.notificationsPerSecond ?? 0)
        wantsShortInterval = rate > options.shortIntervalThreshold
        var after: [MetaWearCommand] = []
        if options.subscribeButton, board.isPresent(.switch) { after.append(Switch.subscribe()) }
        if wantsShortInterval, board.isPresent(.settings) { after.append(Settings.streamingConnectionParameters) }
        if options.ledOnStreamingStart, let revision = board.ledRevision {
            after += LED.connectedIndicator(moduleRevision: revision)
        }
        afterStart = after
    }

    /// Everything written to start streaming once the barrier answered: configure and start per
    /// stream, then ``afterStart``.
    public var startCommands: [MetaWearCommand] {
        var commands = [gyro.configure] + gyro.start
        if let accelerometer { commands += [accelerometer.configure] + accelerometer.start }
        return commands + afterStart
    }

    /// Stop order: accelerometer, then gyro; then the button unsubscribe if it was subscribed.
    public var stopCommands: [MetaWearCommand] {
        var commands = (accelerometer?.stop ?? []) + gyro.stop
        if afterStart.contains(Switch.subscribe()) { commands.append(Switch.unsubscribe()) }
        return commands
    }
}
