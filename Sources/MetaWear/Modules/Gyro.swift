/// Gyroscope module (0x13), Bosch BMI160 or BMI270 (protocol reference, section 3).
///
/// Typical streaming flow:
/// ```
/// let registers = boardInfo.gyroRegisters!            // per chip, from module info
/// write(Gyro.configure(.init(outputDataRate: .hz800, range: .dps1000)))
/// write(try Gyro.startStreaming(registers, packed: true))   // subscribe, enable, power on
/// …                                                   // .gyroPacked notifications
/// write(try Gyro.stopStreaming(registers, packed: true))    // power off, disable, unsubscribe
/// ```
/// The gyro cannot be reconfigured while active: stop, configure, start. The range is host state:
/// keep the configuration written (or read back with ``readConfiguration()``) to scale samples.
public enum Gyro {
    /// Output data rate; the raw value is the `odr` code in bits 0–3 of the config byte.
    public enum OutputDataRate: UInt8, CaseIterable, Hashable, Sendable {
        case hz25 = 6
        case hz50 = 7
        case hz100 = 8
        case hz200 = 9
        case hz400 = 10
        case hz800 = 11
        case hz1600 = 12
        case hz3200 = 13

        /// Nominal rate in Hz.
        public var hertz: Double { 25 * Double(1 << (Int(rawValue) - 6)) }
    }

    /// Measurement range; the raw value is the range code (bits 0–2 of the range byte).
    public enum Range: UInt8, CaseIterable, Hashable, Sendable {
        case dps2000 = 0
        case dps1000 = 1
        case dps500 = 2
        case dps250 = 3
        case dps125 = 4

        /// Full-scale range in °/s.
        public var degreesPerSecond: Double { 2000 / Double(1 << Int(rawValue)) }

        /// LSB per °/s (`FSR_SCALE`): 16.4, 32.8, 65.6, 131.2, 262.4.
        public var lsbPerDegreePerSecond: Double {
            switch self {
            case .dps2000: 16.4
            case .dps1000: 32.8
            case .dps500: 65.6
            case .dps250: 131.2
            case .dps125: 262.4
            }
        }
    }

    /// The SDK always writes bandwidth parameter 2 (normal filter).
    public static let bandwidthParameter: UInt8 = 2

    /// Rate and range: the two bytes of `[13 03 conf range]`.
    public struct Configuration: Hashable, Sendable {
        public var outputDataRate: OutputDataRate
        public var range: Range

        public init(outputDataRate: OutputDataRate = .hz100, range: Range = .dps2000) {
            self.outputDataRate = outputDataRate
            self.range = range
        }

        /// The SDK default after init: 100 Hz, ±2000 °/s (`28 00`).
        public static let sdkDefault = Configuration()

        /// `odr | bwp << 4`, i.e. `0x20 | odr`.
        public var confByte: UInt8 { outputDataRate.rawValue | Gyro.bandwidthParameter << 4 }
        public var rangeByte: UInt8 { range.rawValue }

        /// Decodes the config bytes (from `13 83 conf range`). Bandwidth bits are ignored.
        /// `nil` when the ODR or range code is not one of the tables' codes.
        public init?(confByte: UInt8, rangeByte: UInt8) {
            guard let odr = OutputDataRate(rawValue: confByte & 0x0F),
                let range = Range(rawValue: rangeByte & 0x07)
            else { return nil }
            self.init(outputDataRate: odr, range: range)
        }
    }
}
