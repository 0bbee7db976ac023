extension Gyro {
    /// Gyro registers for one chip (protocol reference, 3.1). Power, interrupt and config registers
    /// are shared; DATA and PACKED differ, and only BMI270 has OFFSET.
    public struct RegisterMap: Hashable, Sendable {
        public var chip: IMUChip
        /// Module revision from module info.
        public var revision: UInt8
        public var powerMode: UInt8 = 0x01
        public var dataInterruptEnable: UInt8 = 0x02
        /// Config write register; read with `0x80 |` (0x83).
        public var config: UInt8 = 0x03
        /// Rotation stream: BMI160 0x05, BMI270 0x04.
        public var data: UInt8
        /// Packed stream (3 samples per notification): BMI160 0x07 from module revision 1, BMI270 0x05;
        /// `nil` when the board has none.
        public var packedData: UInt8?
        /// Manual offsets `[13 06 x y z]`, 61 mdps/LSB: BMI270 only.
        public var offset: UInt8?

        /// BMI160 with packed data (revision ≥ 1).
        public static let bmi160 = RegisterMap(chip: .bmi160, revision: 1)
        /// BMI270.
        public static let bmi270 = RegisterMap(chip: .bmi270, revision: 0)

        public init(chip: IMUChip, revision: UInt8) {
            self.chip = chip
            self.revision = revision
            switch chip {
            case .bmi160:
                data = 0x05
                packedData = revision >= 1 ? 0x07 : nil
                offset = nil
            case .bmi270:
                data = 0x04
                packedData = 0x05
                offset = 0x06
            }
        }

        /// The stream register for `packed`, or an error if the board has no packed register.
        public func streamRegister(packed: Bool) throws(MetaWearCommandError) -> UInt8 {
            guard packed else { return data }
            guard let packedData else {
                throw .packedDataUnsupported(module: .gyro, chip: chip, revision: revision)
            }
            return packedData
        }
    }

    /// `[13 03 conf range]`, e.g. `13 03 28 00` for 100 Hz, ±2000 °/s. Write only while stopped.
    public static func configure(_ configuration: Configuration) -> MetaWearCommand {
        MetaWearCommand(
            module: .gyro, register: 0x03, payload: [configuration.confByte, configuration.rangeByte])
    }

    /// `13 83`; the answer `13 83 conf range` parses as ``MetaWearPacket/gyroConfig(_:)``.
    public static func readConfiguration() -> MetaWearCommand {
        MetaWearCommand(module: .gyro, register: MetaWearRegister.read(0x03))
    }

    /// Subscribe `[13 data|packed 01]`.
    public static func subscribe(_ registers: RegisterMap, packed: Bool = false) throws(MetaWearCommandError)
        -> MetaWearCommand
    {
        MetaWearCommand(module: .gyro, register: try registers.streamRegister(packed: packed), payload: [0x01])
    }

    /// Unsubscribe `[13 data|packed 00]`.
    public static func unsubscribe(_ registers: RegisterMap, packed: Bool = false) throws(MetaWearCommandError)
        -> MetaWearCommand
    {
        MetaWearCommand(module: .gyro, register: try registers.streamRegister(packed: packed), payload: [0x00])
    }

    /// `13 02 01 00`: enable the data interrupt ("enable rotation sampling").
    public static func enableDataInterrupt(_ registers: RegisterMap = .bmi160) -> MetaWearCommand {
        MetaWearCommand(module: .gyro, register: registers.dataInterruptEnable, payload: [0x01, 0x00])
    }

    /// `13 02 00 01`: disable the data interrupt.
    public static func disableDataInterrupt(_ registers: RegisterMap = .bmi160) -> MetaWearCommand {
        MetaWearCommand(module: .gyro, register: registers.dataInterruptEnable, payload: [0x00, 0x01])
    }

    /// `13 01 01`: active power mode.
    public static func powerOn(_ registers: RegisterMap = .bmi160) -> MetaWearCommand {
        MetaWearCommand(module: .gyro, register: registers.powerMode, payload: [0x01])
    }

    /// `13 01 00`: standby.
    public static func powerOff(_ registers: RegisterMap = .bmi160) -> MetaWearCommand {
        MetaWearCommand(module: .gyro, register: registers.powerMode, payload: [0x00])
    }

    /// The SDK's start order: subscribe, enable interrupt, power on.
    /// BMI160: `13 05 01, 13 02 01 00, 13 01 01`; BMI270: `13 04 01, …`; packed `13 07 01` / `13 05 01`.
    public static func startStreaming(_ registers: RegisterMap, packed: Bool = false) throws(MetaWearCommandError)
        -> [MetaWearCommand]
    {
        [try subscribe(registers, packed: packed), enableDataInterrupt(registers), powerOn(registers)]
    }

    /// The reverse: power off, disable interrupt, unsubscribe.
    /// BMI160: `13 01 00, 13 02 00 01, 13 05 00`; BMI270 ends with `13 04 00`.
    public static func stopStreaming(_ registers: RegisterMap, packed: Bool = false) throws(MetaWearCommandError)
        -> [MetaWearCommand]
    {
        [powerOff(registers), disableDataInterrupt(registers), try unsubscribe(registers, packed: packed)]
    }
}
