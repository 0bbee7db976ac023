/// LED module (0x02) (protocol reference, section 7).
///
/// A pattern is written once and then played: `02 03 …` then `02 01 01`; `02 02 01` stops and clears.
public enum LED {
    public enum Color: UInt8, CaseIterable, Hashable, Sendable {
        case green = 0
        case red = 1
        case blue = 2
    }

    /// `repeatCount` value meaning "repeat indefinitely".
    public static let repeatIndefinitely: UInt8 = 0xFF

    /// One LED pattern; times in milliseconds, intensities 0–31.
    public struct Pattern: Hashable, Sendable {
        public var highIntensity: UInt8
        public var lowIntensity: UInt8
        public var riseTime: UInt16
        public var highTime: UInt16
        public var fallTime: UInt16
        public var pulseDuration: UInt16
        /// Ignored (sent as 0) by LED module revision 0, as the SDK does.
        public var delay: UInt16
        public var repeatCount: UInt8

        public init(
            highIntensity: UInt8, lowIntensity: UInt8, riseTime: UInt16, highTime: UInt16, fallTime: UInt16,
            pulseDuration: UInt16, delay: UInt16 = 0, repeatCount: UInt8 = LED.repeatIndefinitely
        ) {
            self.highIntensity = highIntensity
            self.lowIntensity = lowIntensity
            self.riseTime = riseTime
            self.highTime = highTime
            self.fallTime = fallTime
            self.pulseDuration = pulseDuration
            self.delay = delay
            self.repeatCount = repeatCount
        }

        /// SDK preset BLINK: 31/0, rise 0, high 50, fall 0, duration 500.
        public static func blink(repeatCount: UInt8 = LED.repeatIndefinitely, delay: UInt16 = 0) -> Pattern {
            Pattern(
                highIntensity: 31, lowIntensity: 0, riseTime: 0, highTime: 50, fallTime: 0, pulseDuration: 500,
                delay: delay, repeatCount: repeatCount)
        }

        /// SDK preset PULSE: 31/0, 725/500/725, duration 2000.
        public static func pulse(repeatCount: UInt8 = LED.repeatIndefinitely, delay: UInt16 = 0) -> Pattern {
            Pattern(
                highIntensity: 31, lowIntensity: 0, riseTime: 725, highTime: 500, fallTime: 725, pulseDuration: 2000,
                delay: delay, repeatCount: repeatCount)
        }

        /// SDK preset SOLID: 31/31, 0/500/0, duration 1000.
        public static func solid(repeatCount: UInt8 = LED.repeatIndefinitely, delay: UInt16 = 0) -> Pattern {
            Pattern(
                highIntensity: 31, lowIntensity: 31, riseTime: 0, highTime: 500, fallTime: 0, pulseDuration: 1000,
                delay: delay, repeatCount: repeatCount)
        }
    }

    /// `02 03 <colour> 02 <hi> <lo> <rise> <high> <fall> <duration> <delay> <repeat>` (17 bytes).
    /// - parameter pattern: the intensities and timings to play.
    /// - parameter color: which of the three LEDs plays it.
    /// - parameter moduleRevision: LED module-info revision; below 1 the delay is forced to 0.
    public static func writePattern(_ pattern: Pattern, color: Color, moduleRevision: UInt8) -> MetaWearCommand {
        let delay = moduleRevision < 1 ? 0 : pattern.delay
        var payload: [UInt8] = [color.rawValue, 0x02, pattern.highIntensity, pattern.lowIntensity]
        for value in [pattern.riseTime, pattern.highTime, pattern.fallTime, pattern.pulseDuration, delay] {
            payload.append(UInt8(truncatingIfNeeded: value))
            payload.append(UInt8(truncatingIfNeeded: value >> 8))
        }
        payload.append(pattern.repeatCount)
        return MetaWearCommand(module: .led, register: 0x03, payload: payload)
    }

    /// `02 01 01`.
    public static func play() -> MetaWearCommand { MetaWearCommand(module: .led, register: 0x01, payload: [0x01]) }
    /// `02 01 02`.
    public static func autoplay() -> MetaWearCommand { MetaWearCommand(module: .led, register: 0x01, payload: [0x02]) }
    /// `02 01 00`.
    public static func pause() -> MetaWearCommand { MetaWearCommand(module: .led, register: 0x01, payload: [0x00]) }
    /// `02 02 00`.
    public static func stop() -> MetaWearCommand { MetaWearCommand(module: .led, register: 0x02, payload: [0x00]) }
    /// `02 02 01`: stop and clear all patterns.
    public static func stopAndClear() -> MetaWearCommand {
        MetaWearCommand(module: .led, register: 0x02, payload: [0x01])
    }

    /// The "connected" indicator: green BLINK ×3, then play.
    public static func connectedIndicator(moduleRevision: UInt8) -> [MetaWearCommand] {
        [writePattern(.blink(repeatCount: 3), color: .green, moduleRevision: moduleRevision), play()]
    }
}
