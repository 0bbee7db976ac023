/// What a module-info response says about a present module (protocol reference, 2.1).
///
/// The response to `[id, 0x80]` is `[id, 0x80, implementation, revision, extra…]`. A response of just
/// `[id, 0x80]` means the module is absent; ``parse(_:)`` returns `nil` for it (the SDK stores 0xFF
/// for implementation and revision in that case).
public struct ModuleInfo: Hashable, Sendable {
    public var id: MetaWearModuleID
    /// Which chip or variant implements the module, e.g. gyro 0 = BMI160, 1 = BMI270.
    public var implementation: UInt8
    /// Feature revision; gates features such as packed data (gyro BMI160 rev ≥ 1).
    public var revision: UInt8
    /// Module-specific bytes, e.g. logging extra[0] = number of logger slots.
    public var extra: [UInt8]

    public init(id: MetaWearModuleID, implementation: UInt8, revision: UInt8, extra: [UInt8] = []) {
        self.id = id
        self.implementation = implementation
        self.revision = revision
        self.extra = extra
    }

    /// Parses a complete module-info notification.
    ///
    /// - returns: `(id, nil)` when the module is absent (length 2), `(id, info)` when present.
    /// - throws: when the header is not `[id, 0x80]` or the length is 3 (an implementation byte
    ///   without a revision).
    public static func parse(_ bytes: [UInt8]) throws(MetaWearPacketError) -> (MetaWearModuleID, ModuleInfo?) {
        guard bytes.count >= 2 else { throw .tooShort(length: bytes.count) }
        guard bytes[1] == MetaWearRegister.readBit else {
            throw .unexpectedRegister(module: bytes[0], register: bytes[1], expected: MetaWearRegister.readBit)
        }
        let id = MetaWearModuleID(bytes[0])
        switch bytes.count {
        case 2:
            return (id, nil)
        case 3:
            throw .unexpectedLength(module: bytes[0], register: bytes[1], expected: 4, actual: 3)
        default:
            return (id, ModuleInfo(id: id, implementation: bytes[2], revision: bytes[3], extra: Array(bytes[4...])))
        }
    }
}
