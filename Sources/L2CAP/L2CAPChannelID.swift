/// An L2CAP channel identifier, Core v5.4, Vol 3, Part A, 2.1 (Table 2.3, LE fixed channels).
/// An open set over the raw 16 bits.
public struct L2CAPChannelID: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt16

    @inlinable
    public init(rawValue: UInt16) {
        self.rawValue = rawValue
    }

    /// The Attribute Protocol fixed channel.
    public static let att = L2CAPChannelID(rawValue: 0x0004)
    /// The LE signalling channel.
    public static let leSignaling = L2CAPChannelID(rawValue: 0x0005)
    /// The Security Manager Protocol fixed channel.
    public static let securityManager = L2CAPChannelID(rawValue: 0x0006)
}

extension L2CAPChannelID: CustomStringConvertible {
    public var description: String {
        switch self {
        case .att: return "att (0x0004)"
        case .leSignaling: return "leSignaling (0x0005)"
        case .securityManager: return "securityManager (0x0006)"
        default: return "cid 0x\(String(rawValue, radix: 16))"
        }
    }
}
