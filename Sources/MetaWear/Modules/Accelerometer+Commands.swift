extension Accelerometer {
    /// Accelerometer registers for one chip (protocol reference, 4.1). Motion, tap, orientation and
    /// step registers are not modelled.
    public struct RegisterMap: Hashable, Sendable {
        public var chip: IMUChip
        /// Module revision from module info.
        public var revision: UInt8
        public var powerMode: UInt8 = 0x01
        public var dataInterruptEnable: UInt8 = 0x02
        /// DATA_CONFIG write register; read with `0x80 |` (0x83).
        public var dataConfig: UInt8 = 0x03
        /// Acceleration stream: 0x04 on both chips.
        public var data: UInt8 = 0x04
        /// Packed stream: BMI160 0x1c from module revision 1, BMI270 0x05; `nil` when absent.
        public var packedData: UInt8?

        /// BMI160 with packed data (revision ≥ 1).
        public static let bmi160 = RegisterMap(chip: .bmi160, revision: 1)
        /// BMI270.
        public static let bmi270 = RegisterMap(chip: .bmi270, revision: 0)

        public init(chip: IMUChip, revision: UInt8) {
            self.chip = chip
            self.revision = revision
            switch chip {
            case .bmi160: packedData = revision >= 1 ? 0x1C : nil
            case .bmi270: packedData = 0x05
            }
        }

        /// The stream register for `packed`, or an error if the board has no packed register.
        public func streamRegister(packed: Bool) throws(MetaWearCommandError) -> UInt8 {
            guard packed else { return data }
            guard let packedData else {
                throw .packedDataUnsupported(module: .accelerometer, chip: chip, revision: revision)
            }
            return packedData
        }
    }

    /// `[03 03 acc_conf acc_range]`, e.g. BMI160 100 Hz ±4 g → `03 03 28 05`,
    /// BMI270 100 Hz ±16 g → `03 03 a8 03`.
    public static func configure(_ configuration: Configuration, chip: IMUChip) -> MetaWearCommand {
        MetaWearCommand(
            module: .accelerometer, register: 0x03,
            payload: [configuration.confByte(for: chip), configuration.rangeByte(for: chip)])
    }

    /// `03 83`; the answer parses as ``MetaWearPacket/accConfig(_:)``.
    public static func readConfiguration() -> MetaWearCommand {
        MetaWearCommand(module: .accelerometer, register: MetaWearRegister.read(0x03))
    }

    public static func subscribe(_ registers: RegisterMap, packed: Bool = false) throws(MetaWearCommandError)
        -> MetaWearCommand
    {
        MetaWearCommand(module: .accelerometer, register: try registers.streamRegister(packed: packed), payload: [0x01])
    }

    public static func unsubscribe(_ registers: RegisterMap, packed: Bool = false) throws(MetaWearCommandError)
        -> MetaWearCommand
    {
        MetaWearCommand(module: .accelerometer, register: try registers.streamRegister(packed: packed), payload: [0x00])
    }

    /// `03 02 01 00`.
    public static func enableDataInterrupt(_ registers: RegisterMap = .bmi160) -> MetaWearCommand {
        MetaWearCommand(module: .accelerometer, register: registers.dataInterruptEnable, payload: [0x01, 0x00])
    }

    /// `03 02 00 01`.
    public static func disableDataInterrupt(_ registers: RegisterMap = .bmi160) -> MetaWearCommand {
        MetaWearCommand(module: .accelerometer, register: registers.dataInterruptEnable, payload: [0x00, 0x01])
    }

    /// `03 01 01`, except **BMI270 below 12.5 Hz** (filter_perf = 0), where the SDK sends `03 01 02`.
    public static func powerOn(_ registers: RegisterMap, configuration: Configuration) -> MetaWearCommand {
        let mode: UInt8 = registers.chip == .bmi270 && configuration.outputDataRate.isLowPower ? 0x02 : 0x01
        return MetaWearCommand(module: .accelerometer, register: registers.powerMode, payload: [mode])
    }

    /// `03 01 00`.
    public static func powerOff(_ registers: RegisterMap = .bmi160) -> MetaWearCommand {
        MetaWearCommand(module: .accelerometer, register: registers.powerMode, payload: [0x00])
    }

    /// Subscribe, enable interrupt, power on. `configuration` is the one last written; it decides the
    /// BMI270 power mode.
    public static func startStreaming(
        _ registers: RegisterMap, configuration: Configuration, packed: Bool = false
    ) throws(MetaWearCommandError) -> [MetaWearCommand] {
        [
            try subscribe(registers, packed: packed), enableDataInterrupt(registers),
            powerOn(registers, configuration: configuration),
        ]
    }

    /// Power off, disable interrupt, unsubscribe.
    public static func stopStreaming(_ registers: RegisterMap, packed: Bool = false) throws(MetaWearCommandError)
        -> [MetaWearCommand]
    {
        [powerOff(registers), disableDataInterrupt(registers), try unsubscribe(registers, packed: packed)]
    }
}
