/// Accelerometer module (0x03), Bosch BMI160 or BMI270 (protocol reference, section 4).
///
/// Same flow as ``Gyro``: configure while stopped, then ``startStreaming(_:configuration:packed:)``.
/// Unlike the gyro, the config and range *bytes* differ per chip, so encoding and decoding take an
/// ``IMUChip``.
public enum Accelerometer {
    /// Output data rate; the raw value is the enum index, and the wire `odr` code is index + 1.
    public enum OutputDataRate: Int, CaseIterable, Hashable, Sendable {
        case hz0_78125 = 0
        case hz1_5625
        case hz3_125
        case hz6_25
        case hz12_5
        case hz25
        case hz50
        case hz100
        case hz200
        case hz400
        case hz800
        case hz1600

        /// Nominal rate in Hz.
        public var hertz: Double { 0.78125 * Double(1 << rawValue) }

        /// The `odr` field (bits 0–3 of `acc_conf`).
        public var code: UInt8 { UInt8(rawValue + 1) }

        /// Below 12.5 Hz: BMI160 undersampling, BMI270 without filter_perf.
        public var isLowPower: Bool { rawValue < OutputDataRate.hz12_5.rawValue }

        public init?(code: UInt8) {
            guard code >= 1, let rate = OutputDataRate(rawValue: Int(code) - 1) else { return nil }
            self = rate
        }

        /// The table entry nearest to `hertz`, as `mbl_mw_acc_set_odr` snaps (55 Hz → 50 Hz).
        public static func nearest(to hertz: Double) -> OutputDataRate {
            allCases.min { abs($0.hertz - hertz) < abs($1.hertz - hertz) }!
        }
    }

    /// Measurement range.
    public enum Range: Int, CaseIterable, Hashable, Sendable {
        case g2 = 0
        case g4
        case g8
        case g16

        /// Full scale in g.
        public var gravities: Double { Double(2 << rawValue) }

        /// LSB per g: 16384, 8192, 4096, 2048.
        public var lsbPerG: Double { Double(16384 >> rawValue) }

        /// The range byte: BMI160 `03 05 08 0c`, BMI270 `00 01 02 03`.
        public func rangeByte(for chip: IMUChip) -> UInt8 {
            switch chip {
            case .bmi160: [0x03, 0x05, 0x08, 0x0C][rawValue]
            case .bmi270: UInt8(rawValue)
            }
        }

        public init?(rangeByte: UInt8, chip: IMUChip) {
            guard let range = Range.allCases.first(where: { $0.rangeByte(for: chip) == rangeByte }) else { return nil }
            self = range
        }

        /// The table entry nearest to `gravities`, as `mbl_mw_acc_set_range` snaps (14.75 g → 16 g).
        public static func nearest(to gravities: Double) -> Range {
            allCases.min { abs($0.gravities - gravities) < abs($1.gravities - gravities) }!
        }
    }

    /// Rate and range for one chip: the two bytes of `[03 03 acc_conf acc_range]`.
    public struct Configuration: Hashable, Sendable {
        public var outputDataRate: OutputDataRate
        public var range: Range

        public init(outputDataRate: OutputDataRate = .hz100, range: Range) {
            self.outputDataRate = outputDataRate
            self.range = range
        }

        /// SDK defaults after init: BMI160 100 Hz ±2 g (`28 03`), BMI270 100 Hz ±8 g (`a8 02`).
        public static func sdkDefault(for chip: IMUChip) -> Configuration {
            Configuration(outputDataRate: .hz100, range: chip == .bmi160 ? .g2 : .g8)
        }

        /// `odr | bwp << 4 | us/filter_perf << 7`.
        /// BMI160: below 12.5 Hz us = 1, bwp = 0, else us = 0, bwp = 2 (`0x81…0x84`, `0x25…0x2c`).
        /// BMI270: bwp = 2, filter_perf = 1 from 12.5 Hz (`0x21…0x24`, `0xa5…0xac`).
        public func confByte(for chip: IMUChip) -> UInt8 {
            let odr = outputDataRate.code
            switch chip {
            case .bmi160: return outputDataRate.isLowPower ? 0x80 | odr : 0x20 | odr
            case .bmi270: return (outputDataRate.isLowPower ? 0x00 : 0x80) | 0x20 | odr
            }
        }

        public func rangeByte(for chip: IMUChip) -> UInt8 { range.rangeByte(for: chip) }

        /// Decodes `03 83 conf range` for `chip`; filter bits are ignored. `nil` for unknown codes.
        public init?(confByte: UInt8, rangeByte: UInt8, chip: IMUChip) {
            guard let odr = OutputDataRate(code: confByte & 0x0F),
                let range = Range(rangeByte: rangeByte, chip: chip)
            else { return nil }
            self.init(outputDataRate: odr, range: range)
        }
    }
}
