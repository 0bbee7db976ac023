/// Logging module (0x0B): the essentials to read the log clock and clear stale loggers
/// (protocol reference, section 9).
public enum Logging {
    public enum Register {
        public static let enable: UInt8 = 0x01
        public static let trigger: UInt8 = 0x02
        public static let remove: UInt8 = 0x03
        public static let time: UInt8 = 0x04
        public static let length: UInt8 = 0x05
        public static let removeEntries: UInt8 = 0x09
        public static let removeAll: UInt8 = 0x0A
        public static let circularBuffer: UInt8 = 0x0B
        public static let readoutPageCompleted: UInt8 = 0x0D
        public static let pageFlush: UInt8 = 0x10
    }

    /// One log tick: 48/32768 s = 1.46484375 ms (`TICK_TIME_STEP`).
    public static let tickMilliseconds: Double = 48.0 / 32768.0 * 1000.0

    /// The tick is a u32: it wraps to 0 after 2³² ticks, 72.8 days (s).
    public static let tickLapSeconds: Double = 4_294_967_296.0 * tickMilliseconds / 1000

    /// Revision 3 (MetaMotion S) holds the newest entries in a RAM page until a flush.
    public static func hasPageBuffer(moduleRevision: UInt8) -> Bool { moduleRevision >= 3 }

    /// Answer to `0b 84`: `0b 84 <tick u32> <reset_uid u8>`.
    public struct Time: Hashable, Sendable {
        /// Board ticks since it last reset.
        public var tick: UInt32
        /// Changes on every board reset (3 bits used by log entries).
        public var resetUID: UInt8

        public init(tick: UInt32, resetUID: UInt8) {
            self.tick = tick
            self.resetUID = resetUID
        }

        /// `round(tick × 1.46484375)` ms since the board reset, as the SDK computes it. Computed
        /// exactly in integers (1.46484375 = 375/256, halves round up), without libm.
        public var millisecondsSinceReset: Int64 { Int64((UInt64(tick) * 375 + 128) >> 8) }

        /// The host time of tick 0 in this power cycle: `hostNow − millisecondsSinceReset`.
        public func referenceEpochMilliseconds(hostNowMilliseconds: Int64) -> Int64 {
            hostNowMilliseconds - millisecondsSinceReset
        }
    }

    /// `0b 84`: read the log clock. Send on every connect.
    public static func readTime() -> MetaWearCommand {
        MetaWearCommand(module: .logging, register: MetaWearRegister.read(Register.time))
    }

    /// `0b 85`: read the number of stored entries (`0b 85 <n u32>`).
    public static func readLength() -> MetaWearCommand {
        MetaWearCommand(module: .logging, register: MetaWearRegister.read(Register.length))
    }

    /// `0b 01 00`: stop logging.
    public static func stop() -> MetaWearCommand {
        MetaWearCommand(module: .logging, register: Register.enable, payload: [0x00])
    }

    /// `0b 0b 01|00`, `0b 01 01`: start logging, overwriting the oldest entries when full or not.
    public static func start(overwrite: Bool) -> [MetaWearCommand] {
        [
            MetaWearCommand(module: .logging, register: Register.circularBuffer, payload: [overwrite ? 0x01 : 0x00]),
            MetaWearCommand(module: .logging, register: Register.enable, payload: [0x01]),
        ]
    }

    /// `0b 01 01`: logging on again, with the loggers and the full-log mode as they are.
    public static func resume() -> MetaWearCommand {
        MetaWearCommand(module: .logging, register: Register.enable, payload: [0x01])
    }

    /// `0b 10 01`: write the RAM page of a revision 3 board (MetaMotion S) to its NAND flash; until
    /// then up to 511 of the newest entries cannot be read out. MbientLab's docs: only with logging
    /// stopped.
    public static func flushPage() -> MetaWearCommand {
        MetaWearCommand(module: .logging, register: Register.pageFlush, payload: [0x01])
    }

    /// `0b 0a`: remove every logger (trigger).
    public static func removeAllLoggers() -> MetaWearCommand {
        MetaWearCommand(module: .logging, register: Register.removeAll)
    }

    /// `0b 09 ff ff ff ff`, preceded on logging revision 2 by `0b 0d 01`. The board erases only after
    /// the host disconnects.
    public static func clearEntries(moduleRevision: UInt8) -> [MetaWearCommand] {
        let clear = MetaWearCommand(
            module: .logging, register: Register.removeEntries, payload: [0xFF, 0xFF, 0xFF, 0xFF])
        guard moduleRevision == 2 else { return [clear] }
        return [MetaWearCommand(module: .logging, register: Register.readoutPageCompleted, payload: [0x01]), clear]
    }
}
