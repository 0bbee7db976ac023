/// The Bosch IMU behind the accelerometer and gyro modules.
///
/// Chosen from module-info **implementation** bytes, never from the model string (protocol reference,
/// 2.2 and 14): gyro (0x13) 0 = BMI160, 1 = BMI270; accelerometer (0x03) 1 = BMI160, 4 = BMI270.
/// MetaMotion S uses BMI270 for both; MetaMotion R and RL use BMI160.
public enum IMUChip: String, Hashable, Sendable, CaseIterable {
    case bmi160
    case bmi270

    /// From the gyro module's implementation byte; `nil` for values SDK 0.30.0 does not know.
    public init?(gyroImplementation: UInt8) {
        switch gyroImplementation {
        case 0: self = .bmi160
        case 1: self = .bmi270
        default: return nil
        }
    }

    /// From the accelerometer module's implementation byte; `nil` for values SDK 0.30.0 does not know
    /// (including 0 = MMA8452Q and 3 = BMA255, dropped after SDK 0.21.0).
    public init?(accelerometerImplementation: UInt8) {
        switch accelerometerImplementation {
        case 1: self = .bmi160
        case 4: self = .bmi270
        default: return nil
        }
    }

    /// The gyro module implementation byte for this chip.
    public var gyroImplementation: UInt8 { self == .bmi160 ? 0 : 1 }
    /// The accelerometer module implementation byte for this chip.
    public var accelerometerImplementation: UInt8 { self == .bmi160 ? 1 : 4 }
}
