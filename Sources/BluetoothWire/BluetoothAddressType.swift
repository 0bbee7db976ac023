/// The LE address type that accompanies a ``BluetoothAddress`` in HCI commands and events,
/// Core v5.4, Vol 4, Part E, 7.7.65.1 (Peer_Address_Type) and 7.8.12 (Own_Address_Type).
///
/// An open set over the raw octet: values a newer controller sends survive decoding.
public struct BluetoothAddressType: RawRepresentable, Hashable, Sendable {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Public Device Address.
    public static let `public` = BluetoothAddressType(rawValue: 0x00)
    /// Random Device Address. Use it as own address with bumble's emulated controller: a
    /// public own address makes its LocalLink drop every ACL packet (`docs/bumble-test-peer.md`, 1).
    public static let random = BluetoothAddressType(rawValue: 0x01)
    /// Public Identity Address (resolved from an RPA), or "RPA, fall back to public" as own type.
    public static let publicIdentity = BluetoothAddressType(rawValue: 0x02)
    /// Random (static) Identity Address, or "RPA, fall back to random" as own type.
    public static let randomIdentity = BluetoothAddressType(rawValue: 0x03)
}

extension BluetoothAddressType: CustomStringConvertible {
    public var description: String {
        switch self {
        case .public: return "public"
        case .random: return "random"
        case .publicIdentity: return "publicIdentity"
        case .randomIdentity: return "randomIdentity"
        default: return "addressType(0x\(String(rawValue, radix: 16)))"
        }
    }
}
