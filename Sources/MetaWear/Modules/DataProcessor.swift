/// Data-processor module (0x09): tear-down, and the time accounter that gives streamed samples
/// the board's time (protocol reference, section 8).
public enum DataProcessor {
    /// `09 08`: remove every processor.
    public static func removeAll() -> MetaWearCommand { MetaWearCommand(module: .dataProcessor, register: 0x08) }

    /// `09 06 <id>`: remove one processor.
    public static func remove(id: UInt8) -> MetaWearCommand {
        MetaWearCommand(module: .dataProcessor, register: 0x06, payload: [id])
    }

    /// `09 02 <module> <register> ff a0 11 31 03`: a time accounter on a 6-byte sample signal
    /// (`a0`: 6 bytes from offset 0; `11`: accounter; `31`: time mode, 4-byte tick; `03`:
    /// prescale). Each sample then comes out as `09 03 <id> <tick u32> <sample>`, the tick on
    /// the clock of `0b 84` and of log entries. The board answers `09 02 <id>`.
    public static func createTimeAccounter(module: MetaWearModuleID, register: UInt8) -> MetaWearCommand {
        MetaWearCommand(module: .dataProcessor, register: 0x02,
                        payload: [module.rawValue, register, 0xFF, 0xA0, 0x11, 0x31, 0x03])
    }

    /// `09 02 <module> <register> ff a0 10 05 <count − 1>`: a packer of `count` 6-byte samples
    /// (at most 2: `6 × count + 3 < 20`). The board answers `09 02 <id>`.
    public static func createPacker(module: MetaWearModuleID, register: UInt8, count: UInt8) -> MetaWearCommand {
        MetaWearCommand(module: .dataProcessor, register: 0x02,
                        payload: [module.rawValue, register, 0xFF, 0xA0, 0x10, 0x05, count - 1])
    }

    /// `09 02 09 03 <packer> a0 11 31 03`: a time accounter on a packer's output, which then comes
    /// out as `09 03 <id> <tick u32> <samples>`, the tick of the packer's last sample.
    public static func createTimeAccounter(packer: UInt8) -> MetaWearCommand {
        MetaWearCommand(module: .dataProcessor, register: 0x02,
                        payload: [MetaWearModuleID.dataProcessor.rawValue, outputRegister, packer, 0xA0, 0x11, 0x31, 0x03])
    }

    /// `09 07 <id> 01`, then `09 03 01`: notify the processor's output.
    public static func subscribe(id: UInt8) -> [MetaWearCommand] {
        [MetaWearCommand(module: .dataProcessor, register: 0x07, payload: [id, 0x01]),
         MetaWearCommand(module: .dataProcessor, register: outputRegister, payload: [0x01])]
    }

    /// `09 07 <id> 00`: stop notifying the processor's output.
    public static func unsubscribe(id: UInt8) -> MetaWearCommand {
        MetaWearCommand(module: .dataProcessor, register: 0x07, payload: [id, 0x00])
    }

    /// Processor output notifications: `09 03 <id> <payload>`.
    public static let outputRegister: UInt8 = 0x03
}
