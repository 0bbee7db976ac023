/// A notification that could not be decoded. The board (the peer) is at fault, or the host's
/// routing state does not match the board; the packet should be logged and dropped.
///
/// Every case carries the header it was parsed under and what was expected, so a log line can name
/// the module, register and length without a hex dump.
public enum MetaWearPacketError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Fewer than the 2 header bytes.
    case tooShort(length: Int)
    /// The header was recognised but the length does not fit its fixed layout.
    case unexpectedLength(module: UInt8, register: UInt8, expected: Int, actual: Int)
    /// A response carried a register other than the one its decoder expects.
    case unexpectedRegister(module: UInt8, register: UInt8, expected: UInt8)
    /// A field holds a value with no meaning in the protocol (e.g. an unknown ODR code).
    case invalidValue(module: UInt8, register: UInt8, field: String, value: UInt8)

    public var description: String {
        switch self {
        case .tooShort(let length):
            "MetaWear notification too short: \(length) byte(s), need at least 2 (module, register)"
        case .unexpectedLength(let module, let register, let expected, let actual):
            "MetaWear notification \(Self.header(module, register)): expected \(expected) bytes, got \(actual)"
        case .unexpectedRegister(let module, let register, let expected):
            "MetaWear notification \(Self.header(module, register)): expected register 0x\(Hex.byte(expected))"
        case .invalidValue(let module, let register, let field, let value):
            "MetaWear notification \(Self.header(module, register)): invalid \(field) 0x\(Hex.byte(value))"
        }
    }

    private static func header(_ module: UInt8, _ register: UInt8) -> String {
        "\(MetaWearModuleID(module)) [\(Hex.byte(module)) \(Hex.byte(register))]"
    }
}

/// A command that cannot be built for this board. The caller asked for something the board's
/// module info says it does not support.
public enum MetaWearCommandError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Packed data needs BMI270, or BMI160 with module revision ≥ 1.
    case packedDataUnsupported(module: MetaWearModuleID, chip: IMUChip, revision: UInt8)

    public var description: String {
        switch self {
        case .packedDataUnsupported(let module, let chip, let revision):
            "packed \(module) data is not supported on \(chip.rawValue) revision \(revision)"
        }
    }
}
