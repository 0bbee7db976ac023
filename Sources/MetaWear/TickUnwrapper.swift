/// A board's log-clock ticks (u32, 1.46484375 ms) as a count that keeps growing across the u32's
/// wrap, 2³² ticks (about 72.8 days of the board's uptime) after its reset: a tick far below the
/// last one starts the next lap, as the Android SDK reads a decreasing tick. A tick far above the
/// last one, once a lap has passed, is a late one from the lap before.
public struct TickUnwrapper: Sendable {
    private var last: UInt32?
    private var laps: UInt64 = 0

    public init() {}

    public mutating func unwrap(_ tick: UInt32) -> UInt64 {
        guard let last else {
            self.last = tick
            return UInt64(tick)
        }
        if tick < last, last - tick > 1 << 31 {
            laps += 1
        } else if tick > last, tick - last > 1 << 31, laps > 0 {
            return (laps - 1) << 32 | UInt64(tick)
        }
        self.last = tick
        return laps << 32 | UInt64(tick)
    }
}
