/// Event module (0x0A): only what tear-down needs (protocol reference, section 5, disconnect event).
public enum Event {
    /// `0a 05`: remove every recorded event command.
    public static func removeAll() -> MetaWearCommand { MetaWearCommand(module: .event, register: 0x05) }

    /// `0a 04 <id>`: remove one event.
    public static func remove(id: UInt8) -> MetaWearCommand {
        MetaWearCommand(module: .event, register: 0x04, payload: [id])
    }
}
