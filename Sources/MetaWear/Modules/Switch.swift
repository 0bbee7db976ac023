/// Push-button module (0x01) (protocol reference, section 6).
public enum Switch {
    /// The state register: subscribe, and the register events arrive on.
    public static let stateRegister: UInt8 = 0x01

    /// Button state from `01 01 <u8>`.
    public enum State: Hashable, Sendable {
        case released
        case pressed

        /// 0 is released; the SDK hands any other value to the app as a non-zero "pressed" (1 in
        /// practice).
        public init(rawValue: UInt8) { self = rawValue == 0 ? .released : .pressed }

        public var isPressed: Bool { self == .pressed }
    }

    /// `01 01 01`.
    public static func subscribe() -> MetaWearCommand {
        MetaWearCommand(module: .switch, register: stateRegister, payload: [0x01])
    }

    /// `01 01 00`.
    public static func unsubscribe() -> MetaWearCommand {
        MetaWearCommand(module: .switch, register: stateRegister, payload: [0x00])
    }
}
