/// The packet indicator that precedes each HCI packet on a UART (H4) transport,
/// Core v5.4, Vol 4, Part A, 2.
///
/// An open set over the raw octet so that logs can name values this host does not frame.
public struct HCIPacketType: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    public static let command = HCIPacketType(rawValue: 0x01)
    public static let aclData = HCIPacketType(rawValue: 0x02)
    public static let synchronousData = HCIPacketType(rawValue: 0x03)
    public static let event = HCIPacketType(rawValue: 0x04)
    public static let isoData = HCIPacketType(rawValue: 0x05)

    /// The header length that follows the indicator, or `nil` for an indicator H4 does not define.
    var headerLength: Int? {
        switch self {
        case .command, .synchronousData: return 3
        case .aclData, .isoData: return 4
        case .event: return 2
        default: return nil
        }
    }

    /// The payload length declared by a complete `header` of this type.
    func payloadLength(header: ArraySlice<UInt8>) -> Int {
        let i = header.startIndex
        switch self {
        case .event: return Int(header[i + 1])
        case .command, .synchronousData: return Int(header[i + 2])
        case .aclData: return Int(header[i + 2]) | Int(header[i + 3]) << 8
        default: return (Int(header[i + 2]) | Int(header[i + 3]) << 8) & 0x3FFF  // ISO_Data_Load_Length
        }
    }
}

extension HCIPacketType: CustomStringConvertible {
    public var description: String {
        switch self {
        case .command: return "command"
        case .aclData: return "aclData"
        case .synchronousData: return "synchronousData"
        case .event: return "event"
        case .isoData: return "isoData"
        default: return "packetType(0x\(String(rawValue, radix: 16)))"
        }
    }
}
