/// Data-processor module (0x09): only what tear-down needs (protocol reference, section 8).
public enum DataProcessor {
    /// `09 08`: remove every processor.
    public static func removeAll() -> MetaWearCommand { MetaWearCommand(module: .dataProcessor, register: 0x08) }

    /// `09 06 <id>`: remove one processor.
    public static func remove(id: UInt8) -> MetaWearCommand {
        MetaWearCommand(module: .dataProcessor, register: 0x06, payload: [id])
    }
}
