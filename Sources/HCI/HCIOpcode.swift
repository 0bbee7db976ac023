/// An HCI command opcode: a 6-bit OGF and a 10-bit OCF, Core v5.4, Vol 4, Part E, 5.4.1.
///
/// An open set over the raw 16 bits: opcodes this host never sends still decode in Command
/// Complete and Command Status events.
public struct HCIOpcode: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt16

    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// Creates an opcode from its group (6 bits) and command (10 bits) fields.
    public init(ogf: UInt8, ocf: UInt16) {
        rawValue = UInt16(ogf & 0x3F) << 10 | (ocf & 0x03FF)
    }

    /// The OpCode Group Field.
    public var ogf: UInt8 { UInt8(rawValue >> 10) }
    /// The OpCode Command Field.
    public var ocf: UInt16 { rawValue & 0x03FF }

    /// Opcode 0x0000: a Command Complete that only returns command credits.
    public static let noOperation = HCIOpcode(rawValue: 0x0000)

    // Link Control (OGF 0x01)
    public static let disconnect = HCIOpcode(ogf: 0x01, ocf: 0x0006)
    // Controller & Baseband (OGF 0x03)
    public static let setEventMask = HCIOpcode(ogf: 0x03, ocf: 0x0001)
    public static let reset = HCIOpcode(ogf: 0x03, ocf: 0x0003)
    public static let writeLEHostSupport = HCIOpcode(ogf: 0x03, ocf: 0x006D)
    // Informational (OGF 0x04)
    public static let readBufferSize = HCIOpcode(ogf: 0x04, ocf: 0x0005)
    public static let readBDADDR = HCIOpcode(ogf: 0x04, ocf: 0x0009)
    // LE Controller (OGF 0x08)
    public static let leSetEventMask = HCIOpcode(ogf: 0x08, ocf: 0x0001)
    public static let leReadBufferSize = HCIOpcode(ogf: 0x08, ocf: 0x0002)
    public static let leSetRandomAddress = HCIOpcode(ogf: 0x08, ocf: 0x0005)
    public static let leSetScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x000B)
    public static let leSetScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x000C)
    public static let leCreateConnection = HCIOpcode(ogf: 0x08, ocf: 0x000D)
    public static let leCreateConnectionCancel = HCIOpcode(ogf: 0x08, ocf: 0x000E)
    public static let leConnectionUpdate = HCIOpcode(ogf: 0x08, ocf: 0x0013)
    public static let leRemoteConnectionParameterRequestReply = HCIOpcode(ogf: 0x08, ocf: 0x0020)
    public static let leRemoteConnectionParameterRequestNegativeReply = HCIOpcode(ogf: 0x08, ocf: 0x0021)
}

extension HCIOpcode: CustomStringConvertible {
    public var description: String {
        let names: [HCIOpcode: String] = [
            .noOperation: "noOperation", .disconnect: "disconnect", .setEventMask: "setEventMask",
            .reset: "reset", .writeLEHostSupport: "writeLEHostSupport", .readBufferSize: "readBufferSize",
            .readBDADDR: "readBDADDR", .leSetEventMask: "leSetEventMask", .leReadBufferSize: "leReadBufferSize",
            .leSetRandomAddress: "leSetRandomAddress", .leSetScanParameters: "leSetScanParameters",
            .leSetScanEnable: "leSetScanEnable", .leCreateConnection: "leCreateConnection",
            .leCreateConnectionCancel: "leCreateConnectionCancel", .leConnectionUpdate: "leConnectionUpdate",
            .leRemoteConnectionParameterRequestReply: "leRemoteConnectionParameterRequestReply",
            .leRemoteConnectionParameterRequestNegativeReply: "leRemoteConnectionParameterRequestNegativeReply",
        ]
        let hex = String(rawValue, radix: 16)
        let padded = String(repeating: "0", count: 4 - hex.count) + hex
        return "\(names[self] ?? "opcode") (0x\(padded), OGF 0x\(String(ogf, radix: 16)) OCF 0x\(String(ocf, radix: 16)))"
    }
}
