/// An L2CAP signalling command code, Core v5.4, Vol 3, Part A, 4 (Table 4.2). An open set.
public struct L2CAPSignalCode: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    public static let commandReject = L2CAPSignalCode(rawValue: 0x01)
    public static let disconnectionRequest = L2CAPSignalCode(rawValue: 0x06)
    public static let disconnectionResponse = L2CAPSignalCode(rawValue: 0x07)
    public static let connectionParameterUpdateRequest = L2CAPSignalCode(rawValue: 0x12)
    public static let connectionParameterUpdateResponse = L2CAPSignalCode(rawValue: 0x13)
    public static let leCreditBasedConnectionRequest = L2CAPSignalCode(rawValue: 0x14)
    public static let leCreditBasedConnectionResponse = L2CAPSignalCode(rawValue: 0x15)
    public static let flowControlCredit = L2CAPSignalCode(rawValue: 0x16)
}

extension L2CAPSignalCode: CustomStringConvertible {
    public var description: String {
        let names: [UInt8: String] = [
            0x01: "commandReject", 0x06: "disconnectionRequest", 0x07: "disconnectionResponse",
            0x12: "connectionParameterUpdateRequest", 0x13: "connectionParameterUpdateResponse",
            0x14: "leCreditBasedConnectionRequest", 0x15: "leCreditBasedConnectionResponse",
            0x16: "flowControlCredit",
        ]
        return "\(names[rawValue] ?? "signal") (0x\(String(rawValue, radix: 16)))"
    }
}
