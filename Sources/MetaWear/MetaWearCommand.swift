/// One write to the command characteristic (`326a9001`): `[module, register, payload…]`.
///
/// At most 20 bytes (`MW_CMD_MAX_LENGTH` 18 plus the 2 header bytes, protocol reference section 1).
/// Building a longer or shorter command is a programmer error.
public struct MetaWearCommand: Hashable, Sendable, CustomStringConvertible {
    /// Maximum length of a command, header included.
    public static let maximumLength = 20

    /// The bytes to write.
    public let bytes: [UInt8]

    /// Wraps raw command bytes. It is a programmer error to pass fewer than 2 or more than 20 bytes.
    public init(_ bytes: [UInt8]) {
        precondition(bytes.count >= 2 && bytes.count <= Self.maximumLength, "MetaWear command must be 2...20 bytes")
        self.bytes = bytes
    }

    public init(module: MetaWearModuleID, register: UInt8, payload: [UInt8] = []) {
        self.init([module.rawValue, register] + payload)
    }

    public var module: MetaWearModuleID { MetaWearModuleID(bytes[0]) }
    public var register: UInt8 { bytes[1] }
    public var payload: ArraySlice<UInt8> { bytes[2...] }

    /// The SDK writes macro (0x0F) commands with response and everything else without
    /// (`send_command` in `metawearboard.cpp`).
    public var requiresWriteWithResponse: Bool { module == .macro }

    /// Hex, e.g. `13 03 28 00`.
    public var description: String { Hex.bytes(bytes) }
}

/// Register-number helpers shared by all modules (protocol reference, section 1).
public enum MetaWearRegister {
    /// Bit 0x80 marks a read request and its response.
    public static let readBit: UInt8 = 0x80
    /// Bit 0x40 marks a "silent" read (no subscriber); the SDK always subscribes and reads with 0x80.
    public static let silentBit: UInt8 = 0x40

    /// `0x80 | register`.
    public static func read(_ register: UInt8) -> UInt8 { register | readBit }
}
