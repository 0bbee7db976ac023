/// Debug module (0xFE) (protocol reference, section 12).
public enum Debug {
    /// `fe 01`: reset the board.
    public static func reset() -> MetaWearCommand { MetaWearCommand(module: .debug, register: 0x01) }
    /// `fe 06`: ask the board to drop the link.
    public static func disconnect() -> MetaWearCommand { MetaWearCommand(module: .debug, register: 0x06) }
    /// `fe 02`: jump to the bootloader.
    public static func jumpToBootloader() -> MetaWearCommand { MetaWearCommand(module: .debug, register: 0x02) }
    /// `fe 05`: reset after garbage collection.
    public static func resetAfterGarbageCollection() -> MetaWearCommand {
        MetaWearCommand(module: .debug, register: 0x05)
    }
    /// `fe 07`: power save.
    public static func powerSave() -> MetaWearCommand { MetaWearCommand(module: .debug, register: 0x07) }
}
