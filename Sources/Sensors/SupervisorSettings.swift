/// How supervisors behave; the same for every sensor of a gateway.
public struct SupervisorSettings: Sendable {
    public var board: BoardOptions
    public var connectTimeout: Duration
    /// The watchdog fires after max(3 notification intervals, this) without data.
    public var silenceFloor: Duration
    public var batteryInterval: Duration
    /// A button press starts a session when none is open and stops the open one otherwise.
    public var buttonControlsSession: Bool
    public var backoff: Backoff
    /// How long a suspected in-connection gap is held for confirmation (see `StreamTracker`).
    public var gapConfirmation: Duration
    /// How long the start of each stream is held to anchor its clock (at most `gapConfirmation`);
    /// nothing reaches the store before it has passed, so it counts towards the crash window.
    public var warmUp: Duration
    /// A fleet of gateways sharing the sensors (nil: a lone gateway), and how often and for how
    /// long its scans listen for the sensors not held here.
    public var claims: (any ConnectionClaims)?
    public var sightingScan: (every: Duration, duration: Duration) = (.seconds(3), .seconds(1))
    /// How long one initialisation of a board may take in all, times the answer timeouts'
    /// scale (a slow board's answers are awaited longer). Every step has its own timeout; this
    /// is the net under them: past it the link is dropped with a warning naming the step.
    public var initialisationDeadline: Duration = .seconds(60)

    public init(board: BoardOptions = BoardOptions(), connectTimeout: Duration = .seconds(10),
                silenceFloor: Duration = .seconds(1), batteryInterval: Duration = .seconds(300),
                buttonControlsSession: Bool = false, backoff: Backoff = Backoff(),
                gapConfirmation: Duration = .milliseconds(500), warmUp: Duration = .milliseconds(500)) {
        self.board = board
        self.connectTimeout = connectTimeout
        self.silenceFloor = silenceFloor
        self.batteryInterval = batteryInterval
        self.buttonControlsSession = buttonControlsSession
        self.backoff = backoff
        self.gapConfirmation = gapConfirmation
        self.warmUp = warmUp
    }
}
