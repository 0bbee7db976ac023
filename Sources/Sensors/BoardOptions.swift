import MetaWear

/// What the gateway asks of each board: rates, ranges and the small behaviours around streaming.
public struct BoardOptions: Sendable, Equatable {
    public var gyro: Gyro.Configuration
    /// `nil` leaves the accelerometer off.
    public var accelerometer: Accelerometer.Configuration?
    /// `nil` chooses automatically: packed above 100 Hz (where one sample per notification would
    /// need more than 100 notifications a second): 2 samples per notification through a packer
    /// with board time up to 400 Hz, the 3-sample packed register above (see ``StreamingPlan``).
    public var packed: Bool?
    /// Play a short green blink when streaming starts (off by default).
    public var ledOnStreamingStart: Bool
    /// Subscribe to the button so that presses reach the supervisor.
    public var subscribeButton: Bool
    /// Wait for each discovery or read answer at most this long (the SDK allows 150 ms; slow boards
    /// and busy links need more).
    public var responseTimeout: Duration
    /// Notifications per second above which the board is asked for a 7.5 ms connection interval.
    public var shortIntervalThreshold: Double
    /// Log the gyro on the board while streaming, and fill link gaps from the log (`nil`: off).
    public var backfill: Backfill?
    /// Stamp unpacked gyro samples from the board's clock (a time accounter) where the board has
    /// a data processor and a log clock; otherwise from their arrival.
    public var boardTime = true

    /// The board's log as a second copy of the stream.
    public struct Backfill: Sendable, Equatable {
        /// When the log is full: overwrite the oldest entries (true) or stop logging.
        public var overwrite: Bool
        /// A download that reports no progress for this long is abandoned (the entries stay).
        public var stallTimeout: Duration
        /// While streaming, the log is trimmed (at each battery read) to its last this many seconds.
        public var keep: Duration

        public init(overwrite: Bool = true, stallTimeout: Duration = .seconds(5), keep: Duration = .seconds(60)) {
            self.overwrite = overwrite
            self.stallTimeout = stallTimeout
            self.keep = keep
        }
    }

    public init(gyro: Gyro.Configuration = .sdkDefault, accelerometer: Accelerometer.Configuration? = nil,
                packed: Bool? = nil, ledOnStreamingStart: Bool = false, subscribeButton: Bool = false,
                responseTimeout: Duration = .seconds(1), shortIntervalThreshold: Double = 40) {
        self.gyro = gyro
        self.accelerometer = accelerometer
        self.packed = packed
        self.ledOnStreamingStart = ledOnStreamingStart
        self.subscribeButton = subscribeButton
        self.responseTimeout = responseTimeout
        self.shortIntervalThreshold = shortIntervalThreshold
    }

    /// Whether a stream at `hertz` goes packed on a board that has a packed register.
    public func usesPacked(_ hertz: Double) -> Bool { packed ?? (hertz > 100) }
}
